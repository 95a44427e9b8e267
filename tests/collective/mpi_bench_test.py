#!/usr/bin/env python3
"""touchstone-bench under mpiexec -n 2: the collective benchmarks and their baselines, once each.

  mpi_bench_test.py --bench TOUCHSTONE_BENCH --mpiexec MPIEXEC

Rank 0 alone prints and writes the JSON; every collective of every available backend and both
baselines ran without error; busbw is algbw times nccl-tests' factor; device backends report the
staging share of their time and whether they mapped their buffers or copied them. The default sweep is the short one (8 B to 16 MiB in five sizes) and
--collective-sizes=full lists the whole one (8 B and every power of 4 from 16 B to 256 MiB). Exits 77 (CTest's skip) without MPI unless TOUCHSTONE_REQUIRE_BACKENDS
names mpi.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--mpiexec", default="")
    a = ap.parse_args()
    if not a.mpiexec or not os.path.exists(a.mpiexec):
        print("collective benchmarks under mpiexec: this build found no MPI (install openmpi-bin libopenmpi-dev)")
        return 1 if "mpi" in os.environ.get("TOUCHSTONE_REQUIRE_BACKENDS", "").split(",") else 77
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        p = subprocess.run([a.mpiexec, "-n", "2", a.bench, "--benchmark_filter=_w2_(8|1024)/",
                            f"--benchmark_out={out}", "--benchmark_out_format=json"],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            return 1
        if (p.stdout + p.stderr).count("touchstone_world:") != 1:
            problems.append("the context block is not printed exactly once (rank 0 alone reports)")
        with open(out) as f:
            run = json.load(f)
    factor = {"all_reduce": 1.0, "all_gather": 0.5, "broadcast": 1.0, "mpi_allreduce": 1.0, "host_memcpy": 1.0}
    names = [b["name"] for b in run["benchmarks"]]
    if len(names) != len(set(names)):
        problems.append("a benchmark reported twice")
    for size in (8, 1024):
        for want in ([f"collective/cpu/{op}_w2_{size}/manual_time" for op in ("all_reduce", "all_gather", "broadcast")] +
                     [f"baseline/mpi_allreduce_w2_{size}/manual_time", f"baseline/host_memcpy_w2_{size}/manual_time"]):
            if want not in names:
                problems.append(f"missing {want}")
    for b in run["benchmarks"]:
        if b.get("error_occurred"):
            if "unavailable" not in b.get("error_message", ""):
                problems.append(f"{b['name']}: {b.get('error_message')}")
            continue
        op = b["name"].split("/")[-2].split("_w2_")[0]
        if abs(b["busbw"] - b["algbw"] * factor[op]) > 1e-6 * b["algbw"]:
            problems.append(f"{b['name']}: busbw {b['busbw']} is not algbw {b['algbw']} x {factor[op]}")
        device = b["name"].split("/")[1] in ("opencl", "vulkan")
        # A device's staging share: of its copies, in (0, 1]; of mapping its buffers (counter mapped),
        # in [0, 1] (a buffer mapped for good costs next to nothing).
        if device and ("mapped" not in b or not (0 if b["mapped"] else 1e-300) <= b.get("staging_fraction", -1) <= 1):
            problems.append(f"{b['name']}: staging_fraction {b.get('staging_fraction')}, mapped {b.get('mapped')}")
    # The sweeps, listed (nothing runs): the short one by default, the whole one on request.
    short = [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20]
    full = [8] + [4 ** i for i in range(2, 15)]
    for flags, want in (([], short), (["--collective-sizes=full"], full)):
        p = subprocess.run([a.mpiexec, "-n", "2", a.bench, "--benchmark_list_tests=true",
                            "--benchmark_filter=^baseline/mpi_allreduce"] + flags,
                           capture_output=True, text=True, timeout=300)
        listed = sorted(int(line.split("_w2_")[1].split("/")[0]) for line in p.stdout.split())
        if p.returncode != 0 or listed != sorted(want):
            problems.append(f"sizes listed with {flags or 'the defaults'}: {listed} (exit {p.returncode}), not {want}")
    for line in problems:
        print("FAIL:", line)
    print(f"{len(names)} benchmarks, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
