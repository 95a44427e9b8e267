#!/usr/bin/env python3
"""A/B of two touchstone-bench binaries on a machine whose speed drifts: alternating rounds.

  ci/bench-ab.py --a ../before/bench/touchstone-bench --b build/bench/touchstone-bench \\
      --filter 'flash_attention/cpu/decode_h32_kv8_hd128_ctx4096/' --rounds 8 -- --dtypes=F32,F16

Each round runs both binaries on the same benchmarks, one after the other, in alternating order (A
then B, then B then A), so that a drift of the machine within a round falls on both alike. The table
gives each benchmark's median time per binary, the median of the rounds' B/A ratios, and in how many
rounds B was the faster: on this project's VM one run's medians moved by up to 40% from the next with
the same code, and a change is only worth keeping when most rounds agree on it. Every benchmark is
timed from memory unless --warm-cache is passed after `--`.
"""
import argparse
import re
import json
import statistics
import subprocess
import sys


def run_once(binary, args):
    cmd = [binary, f"--benchmark_filter={args.filter}", "--benchmark_format=json",
           f"--benchmark_min_time={args.min_time}"] + args.extra
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        sys.exit(f"bench-ab: cannot run {binary}: {e.strerror}")
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [""])[-1]
        sys.exit(f"bench-ab: {binary} exited with {proc.returncode}: {why}")
    times = {}
    for r in json.loads(proc.stdout).get("benchmarks", []):
        if r.get("run_type") == "aggregate" or r.get("error_occurred"):
            continue
        # Builds from before benchmark names held still report a capped benchmark as
        # ".../iterations:N/manual_time": the same benchmark as the plain name.
        name = re.sub(r"/iterations:[0-9]+", "", r["name"])
        times[name] = float(r["real_time"]) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[r.get("time_unit", "ns")]
    return times


def fmt_time(t):
    return f"{t * 1e3:.3f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="the touchstone-bench to compare against (before)")
    ap.add_argument("--b", required=True, help="the touchstone-bench under test (after)")
    ap.add_argument("--filter", required=True, help="benchmark regex, as --benchmark_filter")
    ap.add_argument("--rounds", type=int, default=6, help="alternating rounds (default 6)")
    ap.add_argument("--min-time", default="0.2", help="--benchmark_min_time per benchmark (default 0.2 s)")
    ap.add_argument("extra", nargs="*", help="more touchstone-bench flags, after --")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("bench-ab: --rounds must be at least 1")

    rounds = []  # per round: {name: (a seconds, b seconds)}
    for i in range(args.rounds):
        order = ("a", "b") if i % 2 == 0 else ("b", "a")
        got = {side: run_once(args.a if side == "a" else args.b, args) for side in order}
        rounds.append({n: (got["a"][n], got["b"][n]) for n in got["a"] if n in got["b"]})
        print(f"round {i + 1}/{args.rounds} done", file=sys.stderr)

    names = sorted({n for r in rounds for n in r})
    if not names:
        sys.exit("bench-ab: no benchmark ran in both binaries (check --filter and the extra flags)")
    w = max(len(n) for n in names + ["benchmark"])
    print(f"{'benchmark':<{w}} {'A median':>11} {'B median':>11} {'B/A':>7} {'B faster':>9}")
    for n in names:
        pairs = [r[n] for r in rounds if n in r]
        a = statistics.median(p[0] for p in pairs)
        b = statistics.median(p[1] for p in pairs)
        ratio = statistics.median(p[1] / p[0] for p in pairs)
        faster = sum(1 for p in pairs if p[1] < p[0])
        print(f"{n:<{w}} {fmt_time(a):>11} {fmt_time(b):>11} {ratio:>7.3f} {faster:>4}/{len(pairs):<4}")


if __name__ == "__main__":
    main()
