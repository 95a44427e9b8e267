#!/usr/bin/env python3
"""A benchmark keeps the name --benchmark_list_tests prints when the iteration cap gives it a fixed count.

Runs touchstone-bench on small ops with a cap that certainly applies (2 iterations against a 2-second
minimum time), then checks that the console, JSON and --benchmark_out reports name each benchmark as the
list does, that the cap really ran (2 iterations), and that an anchored filter copied from the list
selects its benchmark. Exit 1 with the reason on the first mismatch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--filter", required=True, help="small ops the cap applies to")
    args = ap.parse_args()
    cap = ["--cold-iterations=2", "--benchmark_min_time=2"]

    listed = run([args.bench, f"--benchmark_filter={args.filter}", "--benchmark_list_tests"]).split()
    if not listed:
        sys.exit(f"FAIL: the list of '{args.filter}' is empty")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        doc = json.loads(run([args.bench, f"--benchmark_filter={args.filter}", "--benchmark_format=json",
                              f"--benchmark_out={out}", "--benchmark_out_format=json"] + cap))
        with open(out) as f:
            filed = json.load(f)
    for source, d in (("stdout JSON", doc), ("--benchmark_out", filed)):
        runs = [b for b in d["benchmarks"] if b.get("run_type") == "iteration" and "error_message" not in b]
        names = [b["name"] for b in runs]
        if sorted(names) != sorted(listed):
            sys.exit(f"FAIL: {source} names {names}, the list prints {listed}")
        if not any(b["iterations"] == 2 for b in runs):
            sys.exit(f"FAIL: no benchmark of '{args.filter}' was capped at 2 iterations: the test proves nothing")
    console = run([args.bench, f"--benchmark_filter={args.filter}", "--benchmark_format=console"] + cap)
    if "iterations:" in console:
        sys.exit(f"FAIL: the console report has a suffixed name:\n{console}")
    for name in listed:
        anchored = "^" + name.replace(".", "\\.") + "$"
        one = json.loads(run([args.bench, f"--benchmark_filter={anchored}", "--benchmark_format=json"] + cap))
        got = [b["name"] for b in one["benchmarks"]]
        if got != [name]:
            sys.exit(f"FAIL: the anchored filter {anchored} ran {got}")
    print(f"ok: {len(listed)} benchmarks keep their listed names under the cap")


if __name__ == "__main__":
    main()
