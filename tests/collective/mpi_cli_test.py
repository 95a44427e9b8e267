#!/usr/bin/env python3
"""The collective family through the CLI under mpiexec: one scenario per CTest test.

  mpi_cli_test.py --cli TOUCHSTONE --mpiexec MPIEXEC --backend cpu --scenario NAME

run_check       mpiexec -n W touchstone run / check on all three ops: every rank's output written by
                rank 0 alone, judged PASS, printed once
world_mismatch  a case over 3 ranks under mpiexec -n 2: refused with one line, exit 1, no output file
len_differs     two ranks reading cases of different len (MPMD launch): refused before data moves
dtype_differs   the same with F32 against F16
bad_src_rank, bad_len, missing_x
                bad case files: one line, exit 1 on every rank, no output file
rank_dies       a rank killed inside the collective: the others end with one line each, never a hang
rank_stalls     a rank stopped inside the collective: the others' watchdog ends them with one line
tp_pair         the tensor-parallel gemm pair on --backend over 2 and 4 ranks: run, judge and check PASS
                with the derived tolerance printed; an error 1.5 x that bound injected into one rank's
                output fails the judge and half of it passes; ranks with pairs of other shapes, and hidden
                not a multiple of the world: one line
A build without MPI exits 77 (CTest's skip) with the reason, unless TOUCHSTONE_REQUIRE_BACKENDS names mpi.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

FAILURES = []


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(cmd, env=None, timeout=120):
    """(exit status, stdout, stderr, seconds); a command still running after `timeout` is killed and
    reported as exit None with what it had printed, so a hang is a failure of the test's own."""
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out, err = (x.decode() if isinstance(x, bytes) else (x or "") for x in (e.stdout, e.stderr))
        return None, out, err + f"\n(killed after {timeout} s)", time.monotonic() - start
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def our_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("touchstone:")]


def read_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return header, data


def write_st(path, header, tensors):
    """header: metadata dict; tensors: name -> (dtype, shape, bytes), repacked in order."""
    out, blob = {"__metadata__": header}, b""
    for name, (dtype, shape, raw) in tensors.items():
        out[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    text = json.dumps(out).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob)


def tensors_of(path):
    header, data = read_st(path)
    meta = header.pop("__metadata__", {})
    t = {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]]) for k, v in header.items()}
    return meta, t


class Ctx:
    def __init__(self, a, tmp):
        self.cli, self.mpiexec, self.backend, self.tmp = a.cli, a.mpiexec, a.backend, tmp

    def gen(self, op, case, dtype="F32"):
        path = os.path.join(self.tmp, f"{op}__{case}__{dtype}.safetensors")
        if not os.path.exists(path):
            rc, out, err, _ = run([self.cli, "gen", op, case, "--out", path, "--dtype", dtype])
            assert rc == 0, err
        return path

    def mpi(self, n, *args, env=None, timeout=120):
        return run([self.mpiexec, "-n", str(n), self.cli, *args], env=env, timeout=timeout)

    def mpmd(self, args_per_rank, env=None):
        cmd = [self.mpiexec]
        for i, args in enumerate(args_per_rank):
            cmd += ([":"] if i else []) + ["-n", "1", self.cli, *args]
        return run(cmd, env=env)

    def refused(self, what, result, needle, out_path):
        rc, out, err, _ = result
        lines = our_lines(err)
        expect(rc == 1, f"{what}: exit {rc}, not 1 ({err.strip()})")
        expect(len(lines) == 1, f"{what}: {len(lines)} lines of ours on stderr, not one: {lines}")
        expect(any(needle in line for line in lines), f"{what}: no line mentions '{needle}': {lines}")
        expect(not os.path.exists(out_path), f"{what}: an output file was written")


def run_check(c):
    for op, case, w in [("all_reduce", "sum_w3_len1021", 3), ("all_reduce", "max_w2_specials", 2),
                        ("all_gather", "w3_len1021", 3), ("broadcast", "w4_len1021", 4)]:
        for dtype in ["F32", "BF16"]:
            case_path = c.gen(op, case, dtype)
            out = os.path.join(c.tmp, f"out_{op}_{case}_{dtype}.safetensors")
            rc, stdout, err, _ = c.mpi(w, "run", case_path, "--backend", c.backend, "--out", out)
            expect(rc == 0, f"run {op} {case} {dtype}: exit {rc}: {err.strip()}")
            expect(stdout.count("wrote") == 1, f"run {op} {case}: rank 0 alone prints: {stdout!r}")
            if rc != 0:
                continue
            _, t = tensors_of(out)
            expect(sorted(t) == sorted(f"out.{r}" for r in range(w)), f"run {op}: outputs {sorted(t)}")
            rc, stdout, err, _ = run([c.cli, "judge", case_path, out])
            expect(rc == 0, f"judge {op} {case} {dtype}: exit {rc}: {stdout}{err}")
            rc, stdout, err, _ = c.mpi(w, "check", case_path, "--backend", c.backend)
            expect(rc == 0 and stdout.count("PASS") == 1,
                   f"check {op} {case} {dtype}: exit {rc}, {stdout.count('PASS')} PASS lines: {stdout}{err}")


def world_mismatch(c):
    out = os.path.join(c.tmp, "out.safetensors")
    c.refused("world_mismatch", c.mpi(2, "run", c.gen("all_reduce", "sum_w3_len1021"), "--backend", c.backend,
                                      "--out", out),
              "the case's world_size is 3, but 2 ranks are running", out)


def len_differs(c):
    out = os.path.join(c.tmp, "out.safetensors")
    a, b = c.gen("all_reduce", "sum_w2_len1"), c.gen("all_reduce", "sum_w2_len1021")
    c.refused("len_differs", c.mpmd([["run", a, "--backend", c.backend, "--out", out],
                                     ["run", b, "--backend", c.backend, "--out", out]]),
              "ranks disagree before any data moved: rank 0 runs all_reduce reduce=sum F32 len=1 world_size=2, "
              "rank 1 runs all_reduce reduce=sum F32 len=1021", out)


def dtype_differs(c):
    out = os.path.join(c.tmp, "out.safetensors")
    a, b = c.gen("all_gather", "w2_len1021", "F32"), c.gen("all_gather", "w2_len1021", "F16")
    c.refused("dtype_differs", c.mpmd([["run", a, "--backend", c.backend, "--out", out],
                                       ["run", b, "--backend", c.backend, "--out", out]]),
              "rank 1 runs all_gather F16 len=1021", out)


def edited(c, name, edit):
    meta, t = tensors_of(c.gen("broadcast", "w2_len1021"))
    edit(meta, t)
    path = os.path.join(c.tmp, name + ".safetensors")
    write_st(path, meta, t)
    return path


def bad_input(c, name, edit, needle):
    out = os.path.join(c.tmp, "out.safetensors")
    c.refused(name, c.mpi(2, "run", edited(c, name, edit), "--backend", c.backend, "--out", out), needle, out)


def rank_dies(c):
    out = os.path.join(c.tmp, "out.safetensors")
    rc, _, err, seconds = c.mpi(3, "run", c.gen("all_reduce", "sum_w3_len1021"), "--backend", c.backend, "--out", out,
                                env={"TOUCHSTONE_MPI_FAULT": "die@1"}, timeout=60)
    lines = our_lines(err)
    expect(rc != 0, f"rank_dies: exit 0")
    expect(not os.path.exists(out), "rank_dies: an output file was written")
    expect(seconds < 60, f"rank_dies: took {seconds:.0f} s")
    # Each survivor one line (at most), naming the collective it was in; the dead rank none.
    expect(1 <= len(lines) <= 2, f"rank_dies: {len(lines)} lines of ours: {lines}")
    expect(all("all_reduce of 1021 F32 elements" in line and "rank 1:" not in line for line in lines),
           f"rank_dies: {lines}")
    for r in (0, 2):
        expect(sum(f"rank {r}:" in line for line in lines) <= 1, f"rank_dies: rank {r} printed twice: {lines}")


# The watchdog's timeout in rank_stalls. It bounds every exchange a rank makes, the harness's own
# before the data moves included, and the rank that stalls does so only in the data collective: the
# others must first meet it in those exchanges. On a loaded 2-core machine running 3 ranks (beside the
# other tests CTest runs), a rank can be off the cores for more than 2 s between MPI_Init and the first
# exchange, and a 2 s timeout then fires there, naming "an exchange of the ranks' checks" instead of the
# all_gather. 10 s is far past that skew. (The other way this test could flake, a rank printing twice
# when its watchdog's line and the launcher's stop signal met, is closed in mpi/mpi_world.cpp: a rank
# writes one line at most.) The test still fails if the watchdog does not end the stall: no line naming
# the all_gather and the timeout, a run that ends before the timeout or outlives it by more than the
# slack below, or a hang (killed at 120 s).
STALL_TIMEOUT = 10
STALL_SLACK = 40  # launching and ending 3 ranks on a loaded machine, beside the timeout itself


def rank_stalls(c):
    out = os.path.join(c.tmp, "out.safetensors")
    rc, _, err, seconds = c.mpi(3, "run", c.gen("all_gather", "w3_len1021"), "--backend", c.backend, "--out", out,
                                env={"TOUCHSTONE_MPI_FAULT": "stall@2", "TOUCHSTONE_MPI_TIMEOUT": str(STALL_TIMEOUT)},
                                timeout=120)
    lines = our_lines(err)
    expect(rc is not None, f"rank_stalls: still running after 120 s with a {STALL_TIMEOUT} s timeout: {err}")
    expect(rc != 0, "rank_stalls: exit 0")
    expect(not os.path.exists(out), "rank_stalls: an output file was written")
    # Ended by the watchdog: not before its timeout, and not long after it.
    expect(STALL_TIMEOUT <= seconds < STALL_TIMEOUT + STALL_SLACK,
           f"rank_stalls: took {seconds:.1f} s with a {STALL_TIMEOUT} s timeout")
    expect(any(f"all_gather of 1021 F32 elements did not complete within {STALL_TIMEOUT} s" in line for line in lines),
           f"rank_stalls: no watchdog line: {lines}")
    for r in (0, 1, 2):
        expect(sum(f"rank {r}:" in line for line in lines) <= 1, f"rank_stalls: rank {r} printed twice: {lines}")


def f32_values(raw):
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def tp_pair(c):
    import re
    for case, w, dtype in [("w2_m5_k67_h16_n33", 2, "F32"), ("w2_m5_k67_h16_n33", 2, "BF16"),
                           ("w4_m1_k128_h128_n96", 4, "F32"), ("w4_m1_k128_h128_n96", 4, "F16")]:
        what = f"tp_pair {case} {dtype} on {c.backend}"
        case_path = c.gen("tp_gemm_pair", case, dtype)
        out = os.path.join(c.tmp, f"out_tp_{case}_{dtype}.safetensors")
        rc, stdout, err, _ = c.mpi(w, "run", case_path, "--backend", c.backend, "--out", out)
        expect(rc == 0 and stdout.count("wrote") == 1, f"{what}: run exit {rc}: {stdout}{err.strip()}")
        if rc != 0:
            continue
        meta, t = tensors_of(out)
        expect(sorted(t) == sorted(f"out.{r}" for r in range(w)), f"{what}: outputs {sorted(t)}")
        rc, stdout, err, _ = run([c.cli, "judge", case_path, out])
        expect(rc == 0, f"{what}: judge exit {rc}: {stdout}{err}")
        rc, stdout, err, _ = c.mpi(w, "check", case_path, "--backend", c.backend)
        expect(rc == 0 and stdout.count("PASS") == 1, f"{what}: check exit {rc}: {stdout}{err}")
        expect(f"tensor-parallel pair over {w} ranks" in stdout, f"{what}: no derivation printed: {stdout}")
        if dtype != "F32":
            continue
        # One rank's largest output moved by 1.5 x its bound fails the judge; by half of it, passes.
        m = re.search(r"out\.1 .*?\n\s*tolerance: atol=([0-9.e+-]+) rtol=([0-9.e+-]+)", stdout)
        expect(m is not None, f"{what}: no tolerance of out.1 printed: {stdout}")
        if m is None:
            continue
        atol, rtol = float(m.group(1)), float(m.group(2))
        _, case_t = tensors_of(case_path)
        want = f32_values(case_t["expected.out.1"][2])
        i = max(range(len(want)), key=lambda j: abs(want[j]))
        for factor, passes in [(1.5, False), (0.5, True)]:
            moved = list(want)
            moved[i] = want[i] + (1 if want[i] >= 0 else -1) * factor * (atol + rtol * abs(want[i]))
            tensors = dict(t)
            tensors["out.1"] = ("F32", t["out.1"][1], struct.pack(f"<{len(moved)}f", *moved))
            injected = os.path.join(c.tmp, f"injected_{factor}.safetensors")
            write_st(injected, meta, tensors)
            rc, stdout, err, _ = run([c.cli, "judge", case_path, injected])
            expect((rc == 0) == passes and ("FAIL" in stdout) != passes,
                   f"{what}: out.1[{i}] moved by {factor} x the bound: judge exit {rc}: {stdout}{err}")
    # Two ranks with pairs of other shapes (MPMD launch): refused before any data moves, naming both.
    out = os.path.join(c.tmp, "out.safetensors")
    a, b = c.gen("tp_gemm_pair", "w2_m5_k67_h16_n33"), c.gen("tp_gemm_pair", "w2_m1_k128_h64_n96")
    c.refused("tp_pair shapes differ", c.mpmd([["run", a, "--backend", c.backend, "--out", out],
                                               ["run", b, "--backend", c.backend, "--out", out]]),
              "ranks disagree before any data moved: rank 0 runs tp_gemm_pair F32 hidden=16 k=67 m=5 n=33 "
              "world_size=2, rank 1 runs tp_gemm_pair F32 hidden=64 k=128 m=1 n=96 world_size=2", out)
    # hidden not a multiple of the world: one line, exit 1 on every rank, no output.
    meta, t = tensors_of(c.gen("tp_gemm_pair", "w2_m5_k67_h16_n33"))
    meta["hidden"] = "15"
    bad = os.path.join(c.tmp, "tp_bad_hidden.safetensors")
    write_st(bad, meta, t)
    out = os.path.join(c.tmp, "out.safetensors")
    c.refused("tp_pair bad hidden", c.mpi(2, "run", bad, "--backend", c.backend, "--out", out),
              "parameter 'hidden' is 15, not a multiple of world_size 2", out)


SCENARIOS = {
    "run_check": run_check,
    "world_mismatch": world_mismatch,
    "len_differs": len_differs,
    "dtype_differs": dtype_differs,
    "bad_src_rank": lambda c: bad_input(c, "bad_src_rank", lambda m, t: m.update(src_rank="2"),
                                        "parameter 'src_rank' is 2, outside the world of 2 ranks"),
    "bad_len": lambda c: bad_input(c, "bad_len", lambda m, t: m.update(len="1000"), "x.0"),
    "missing_x": lambda c: bad_input(c, "missing_x", lambda m, t: t.pop("x.1"), "x.1"),
    "rank_dies": rank_dies,
    "rank_stalls": rank_stalls,
    "tp_pair": tp_pair,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mpiexec", default="")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    a = ap.parse_args()
    if not a.mpiexec or not os.path.exists(a.mpiexec):
        required = "mpi" in os.environ.get("TOUCHSTONE_REQUIRE_BACKENDS", "").split(",")
        print("collective CLI under mpiexec: this build found no MPI (install openmpi-bin libopenmpi-dev)")
        return 1 if required else 77
    with tempfile.TemporaryDirectory() as tmp:
        SCENARIOS[a.scenario](Ctx(a, tmp))
    print(f"{a.scenario}: {len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
