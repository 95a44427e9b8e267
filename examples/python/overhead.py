"""What judging costs next to the least a script could do: for a 4096 x 4096 F32 case (rms_norm,
tokens=4096, dim=4096), touchstone.load + touchstone.judge against reading the same case file with
NumPy and comparing with numpy.allclose. Best of N runs each, page cache warm for both.
    PYTHONPATH=build/python python3 examples/python/overhead.py [runs]"""
import json
import os
import sys
import tempfile
import time

import numpy as np

import touchstone


def read_expected(path, name="expected.out"):
    """The plain way: the safetensors header, then one tensor read straight into an array."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        d = json.loads(f.read(n))[name]
        begin, end = d["data_offsets"]
        f.seek(8 + n + begin)
        return np.fromfile(f, dtype=np.float32, count=(end - begin) // 4).reshape(d["shape"])


def best(fn, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    t0 = time.perf_counter()
    case = touchstone.case("rms_norm", {"tokens": 4096, "dim": 4096, "eps": 1e-5})
    generated = time.perf_counter() - t0
    out = touchstone.run(case, "cpu")["out"]  # a kernel's outputs, as an array
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "rms_norm_4096x4096.safetensors")
        touchstone.save(case, path)
        mb = os.path.getsize(path) / 1e6
        tol = case.tolerance("out")
        atol, rtol = 1e-5, 1e-5  # a hand-picked pair, as a plain test would have

        def plain():
            assert np.allclose(out, read_expected(path), rtol=rtol, atol=atol)

        def judged():
            assert touchstone.judge(touchstone.load(path), {"out": out})

        def judge_only():
            assert touchstone.judge(loaded, {"out": out})

        loaded = touchstone.load(path)
        plain_s, judged_s, judge_s = best(plain, runs), best(judged, runs), best(judge_only, runs)
    print(f"case file {mb:.0f} MB; touchstone.case() generated it in {generated:.2f} s (inputs + the reference)")
    print(f"read + numpy.allclose          {plain_s * 1e3:8.1f} ms")
    print(f"touchstone.load + judge        {judged_s * 1e3:8.1f} ms   ({judged_s / plain_s:.2f}x)")
    print(f"  of which judge               {judge_s * 1e3:8.1f} ms")
    print(f"tolerance judged by: {tol}")


if __name__ == "__main__":
    main()
