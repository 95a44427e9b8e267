#!/usr/bin/env python3
"""The graph family's host time per step, eager against replayed, in shuffled rounds.

A replay's figure is its host time (`host_us`: the step's wall time less the device's own time) as a
share of the eager step's, per backend and program: the graph issue's targets are 10% on vulkan and
opencl, 20% on cpu. Those are small numbers of microseconds on a VM whose speed drifts, so each
(backend, preset) pair runs in a process of its own, the pairs in a new shuffled order every round,
and each figure is the median over the rounds of that benchmark's mean per iteration.

  ci/graph-rounds.py --bench build/bench/touchstone-bench --rounds 3
  ci/graph-rounds.py --backends opencl --presets llama_decode_small_Q4_K_l1 --rounds 5

Cold (the benchmark's cache flush before every iteration) for every preset; warm (--warm-cache) too
for the presets given to --warm. Columns: launches (the step's nodes), then eager's and replay's time,
host_us and cpu_us (the calling thread's CPU time per step), then replay / eager of host_us and cpu_us.
"""
import argparse
import json
import random
import statistics
import subprocess
import sys

PRESETS = ["llama_decode_small_F32_l1", "llama_decode_small_Q4_K_l1", "qwen3_moe_decode_small_Q4_K_l1"]


def run_pair(bench, backend, preset, warm, min_time):
    cmd = [bench, f"--benchmark_filter=^graph/{backend}/{preset}/(eager|replay)/",
           f"--benchmark_min_time={min_time}", "--benchmark_format=json"]
    if warm:
        cmd.insert(1, "--warm-cache")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"graph-rounds: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    out = {}
    for b in json.loads(proc.stdout)["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"graph-rounds: {b['name']}: {b.get('error_message', 'error')}")
        mode = "replay" if "/replay" in b["name"] else "eager"
        out[mode] = (b["real_time"], b["host_us"], b["host_cpu_us"], b["launches"])
    if set(out) != {"eager", "replay"}:
        sys.exit(f"graph-rounds: graph/{backend}/{preset}: the benchmark binary ran {sorted(out)}, not eager and replay")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/bench/touchstone-bench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--backends", default="cpu,opencl,vulkan")
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--warm", default="llama_decode_small_Q4_K_l1", help="presets run warm too ('' for none)")
    ap.add_argument("--min-time", default="0.1")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("graph-rounds: --rounds must be at least 1")
    backends, presets = a.backends.split(","), a.presets.split(",")
    jobs = [(b, p, False) for b in backends for p in presets]
    jobs += [(b, p, True) for b in backends for p in a.warm.split(",") if p]
    got = {}
    for r in range(a.rounds):
        order = jobs[:]
        random.shuffle(order)
        for job in order:
            got.setdefault(job, []).append(run_pair(a.bench, *job, a.min_time))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    for warm in (False, True):
        rows = [j for j in jobs if j[2] == warm]
        if not rows:
            continue
        print("warm (--warm-cache):" if warm else "cold (cache flushed before every iteration):")
        print(f"{'benchmark':44} launches |  eager us  host_us  cpu_us | replay us  host_us  cpu_us "
              "| host_us r/e cpu_us r/e | rounds")
        for b, p, w in rows:
            runs = got[(b, p, w)]
            e = [statistics.median(x["eager"][i] for x in runs) for i in range(4)]
            r = [statistics.median(x["replay"][i] for x in runs) for i in range(4)]
            print(f"{'graph/' + b + '/' + p:44} {e[3]:8.0f} | {e[0]:9.0f} {e[1]:8.0f} {e[2]:7.0f} | {r[0]:9.0f} "
                  f"{r[1]:8.0f} {r[2]:7.0f} | {100 * r[1] / e[1]:10.1f}% {100 * r[2] / e[2]:9.1f}% | {len(runs)}")
        print()


if __name__ == "__main__":
    main()
