#!/usr/bin/env python3
"""The short benchmark pass: runs touchstone-bench (or reads its JSON) and prints one table.

Every op benchmark is set against the machine's own limits measured in the same run, in the class
`bound` names (report/benchruns.py): `read` (memory-bound, writing under a tenth of what it reads: a
decode GEMV, KV decode) as a fraction of the read-only stream, `stream` (memory-bound otherwise) of
the triad bandwidth, `compute` (arithmetic intensity at or above the machine balance, fma_peak /
stream_triad) of OpenBLAS SGEMM at m512. The `figure` column is that fraction with its roof's name;
the columns after it give the other roofs for reference. With repetitions, `reps` gives the range of
the repetitions' own figures.

A device backend (vulkan, opencl) is judged against its own device's roofs, measured in the same run
(baseline/device_{read,copy,fma_f32,fma_f16}/<backend>, added for every backend the filter selects):
its copy stream in the triad's place, its read stream, its F32 FMA peak, and CLBlast SGEMM on the
opencl device. Each fraction is printed with the name of the roof it is of ("62.0% dev read").

A paged decode (kv_paged_decode_attention, paged_decode_attention) reads its pool's rows in pieces at
the places a block table gives: for each benchmark the filter selects whose pool has one,
baseline/paged_read/<pool> (that pool's bytes read in its block table's order, nothing computed) is
run too, and a section after the table gives the benchmark as a fraction of it ("67.2% of paged
read"), and that read as a fraction of the contiguous one: what the layout itself allows a kernel on
this machine.

  ci/bench-summary.py --bench build/bench/touchstone-bench --filter 'gemm/cpu'
  ci/bench-summary.py --json results.json
  ci/bench-summary.py --filter 'gemm_quant/cpu/Q4_K_m1_' --interleave 7   # limits drift: interleave

Collectives run under an MPI launcher (--mpiexec, --ranks W): touchstone-bench then runs the collective
family alone, and --interleave N becomes --collective-rounds=N (every rank must run the same
benchmark at the same time, so the rounds alternate in a fixed order instead of a random one). The
table gives each size's busbw (nccl-tests' definition) as a median of the rounds, beside the same MPI's
MPI_Allreduce and every rank's memory copy at that size, and the devices' staging share:

  ci/bench-summary.py --mpiexec mpiexec --ranks 4 --interleave 5 --filter '_w4_16777216/'

The default filter is the cpu backend: the OpenCL and Vulkan backends on this kind of machine run on
PoCL and lavapipe, CPU emulations where one model-sized iteration can take tens of seconds; select
them with --filter. With --strict, a benchmark that failed (setup, execute, a wrong baseline result)
makes the exit status 1; "unsupported" and "(backend) unavailable" stay skips.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# The run's data and its classification against the machine's limits live in one module, shared with
# `touchstone report` (report/benchruns.py).
sys.dont_write_bytecode = True  # no __pycache__ in the source (or install) tree
# In the source tree it is ci/../report; installed, share/touchstone/report beside this script.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(_here, "..", "report"), os.path.join(_here, "report")]
from benchruns import (BASELINE_FILTER, SKIP_PREFIXES, classify, collapse, device_roof_filter,  # noqa: E402
                       limits_from_baselines, normalised_reps, number, op_parts, seconds, short_name)


DEFAULT_FILTER = "^[a-z_]+/cpu/"


def default_bench():
    here = os.path.dirname(os.path.abspath(__file__))
    for build in ("build", "build-bench"):
        path = os.path.join(here, "..", build, "bench", "touchstone-bench")
        if os.access(path, os.X_OK):
            return os.path.normpath(path)
    return None


def listed(bench, filt, extra):
    """The op benchmarks `filt` selects with the run's own flags `extra` (--dtypes names the dtypes
    benchmarked), as (op, backend, preset, dtype) (touchstone-bench lists them without running)."""
    proc = subprocess.run([bench, f"--benchmark_filter={filt}", "--benchmark_list_tests=true"] + extra,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    parts = (op_parts(short_name(line.strip())) for line in proc.stdout.splitlines())  # with "/manual_time"
    return [p for p in parts if p]


# A paged pool's own read (baseline/paged_read/<pool>), for the decode ops whose pools it reads: a
# kv_paged_decode_attention preset names its pool (llama3_8b_ctx4096_F16, whatever the queries' dtype);
# a paged_decode_attention pool is of the benchmark's dtype (llama3_8b_b8_ctx4096 at F16:
# llama3_8b_b8_ctx4096_F16).
PAGED_READ_POOLS = {
    "kv_paged_decode_attention": lambda preset, dtype: preset,
    "paged_decode_attention": lambda preset, dtype: f"{preset}_{dtype}",
}


def paged_pool(parts):
    """The pool of an op benchmark's (op, backend, preset, dtype) that baseline/paged_read names; None
    for the other ops."""
    pool = PAGED_READ_POOLS.get(parts[0])
    return pool(parts[2], parts[3]) if pool else None


def paged_read_filter(bench, selected, extra):
    """The baseline/paged_read/<pool> of each pool of the `selected` op benchmarks that the bench has
    with the run's flags `extra`, as a filter alternative ("" for none)."""
    pools = {paged_pool(p) for p in selected} - {None}
    proc = subprocess.run([bench, "--benchmark_filter=^baseline/paged_read/", "--benchmark_list_tests=true"] + extra,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    have = {short_name(line.strip()).split("/")[2] for line in proc.stdout.splitlines() if line.strip()}
    return "|".join(f"^baseline/paged_read/{p}/" for p in sorted(pools & have))


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def run_collective_bench(args, bench):
    """touchstone-bench under mpiexec -n W: the collective family alone, rounds alternating in order."""
    filt = args.filter if args.filter != DEFAULT_FILTER else "^(collective|baseline)/"
    cmd = [args.mpiexec, "-n", str(args.ranks), bench, f"--benchmark_filter={filt}", "--benchmark_format=json",
           f"--collective-rounds={args.interleave or 1}"] + args.extra
    print("running:", " ".join(cmd), file=sys.stderr)
    # Open MPI refuses more ranks than cores unless told: a 2-core machine runs 4 ranks oversubscribed.
    env = {"OMPI_MCA_rmaps_base_oversubscribe": "1", **os.environ}
    before = load_average()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"bench-summary: mpiexec touchstone-bench exited with {proc.returncode}")
    data = json.loads(proc.stdout)
    data.setdefault("context", {})["load_average"] = f"{before} before, {load_average()} after"
    data["context"]["running"] = " ".join(cmd)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(data, f, indent=1)
    return data


def run_bench(args):
    bench = args.bench or default_bench()
    if not bench:
        sys.exit("bench-summary: no touchstone-bench found; pass --bench PATH")
    if args.mpiexec:
        return run_collective_bench(args, bench)
    baselines = BASELINE_FILTER
    selected = listed(bench, args.filter, args.extra)
    devices = device_roof_filter({p[1] for p in selected} - {"cpu", "reference"})
    if devices:
        baselines += "|" + devices
    paged = paged_read_filter(bench, selected, args.extra)
    if paged:
        baselines += "|" + paged
    cmd = [bench, f"--benchmark_filter=({args.filter})|{baselines}", "--benchmark_format=json",
           f"--benchmark_min_time={args.min_time}"] + args.extra
    if args.interleave:
        # The limits drift from minute to minute on a shared machine (this project's VM: triad 19-36
        # GB/s). Interleaved repetitions spread every benchmark, baselines included, over the same span
        # of the run, so each median is set against limits measured at the same times.
        cmd += [f"--benchmark_repetitions={args.interleave}", "--benchmark_enable_random_interleaving=true"]
    print("running:", " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench-summary: touchstone-bench exited with {proc.returncode}")
    if args.save:
        with open(args.save, "w") as f:
            f.write(proc.stdout)
    return json.loads(proc.stdout)


def pct(x, roof=None):
    """A fraction as a percentage, with the name of the roof it is of where given."""
    if x is None:
        return ""
    return f"{100 * x:5.1f}%" + (f" {roof}" if roof else "")


def gb(x, scale=1e9):
    return f"{x / scale:.1f}" if x else "n/a"


def summarize(data, out=sys.stdout):
    runs = collapse(data.get("benchmarks", []))
    limits = limits_from_baselines(runs)
    triad_bw, read_bw, fma, sgemm, balance = limits.triad, limits.read, limits.fma, limits.sgemm, limits.balance

    ctx = data.get("context", {})
    print(f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} cpus, "
          f"backends {ctx.get('touchstone_backends', '?')}", file=out)
    print("baselines: triad {} GB/s, read {} GB/s, fma peak {} GFLOP/s, cblas sgemm m512 {} GFLOP/s, balance {} FLOP/byte".format(
        gb(triad_bw), gb(read_bw), gb(fma), gb(sgemm), f"{balance:.1f}" if balance else "n/a"), file=out)
    # Each device backend's own roofs: its benchmarks' fractions below are of these ("dev ...").
    for backend, d in sorted(limits.devices.items()):
        dl = limits.for_backend(backend)
        print(f"device roofs, {backend}: dev read {gb(d.read)} GB/s, dev copy {gb(d.copy)} GB/s (read + write), "
              f"dev fma {gb(d.fma_f32)} GFLOP/s F32, {gb(d.fma_f16)} GFLOP/s F16, balance "
              f"{f'{dl.balance:.1f}' if dl.balance else 'n/a'} FLOP/byte", file=out)
    print(file=out)

    w = max([len(n) for n in runs] + [len("benchmark")])
    c = 15  # a fraction and its roof's name: " 45.2% dev copy"
    header = (f"{'benchmark':<{w}} {'time':>10} {'GB/s':>8} {'GFLOP/s':>9} {'bound':>7} {'figure':>{c}} {'of mem roof':>{c}} "
              f"{'of read roof':>{c}} {'of gemm':>{c}} {'of fma peak':>{c}} {'reps':>9}")
    print(header, file=out)
    print("-" * len(header), file=out)
    skipped = []
    for name, r in runs.items():
        if r.get("error_occurred"):
            skipped.append((name, r.get("error_message", "")))
            continue
        bw = number(r, "bytes_per_second")
        fl = number(r, "flops")
        t = seconds(r)
        bound, cells, spread = "", ["", "", "", "", ""], ""
        parts = op_parts(name)
        if parts:
            # A device backend's benchmarks against its own device's roofs, where the run measured them.
            lim = limits.for_backend(parts[1])
            # The range of the repetitions' own figures (of the memory roof or of sgemm, against the
            # run's median limits): how far one repetition strays from the median above it.
            reps = normalised_reps(r, lim)
            if len(reps) > 1:
                spread = f"{100 * min(reps):.0f}-{100 * max(reps):.0f}%"
            f = classify(r, lim)
            n = f.names
            bound = f.bound
            cells = [pct(f.normalised, f.roof_name), pct(f.of_triad, n["triad"]), pct(f.of_read, n["read"]),
                     pct(f.of_sgemm, n["sgemm"]), pct(f.of_peak, n["fma"])]
        tstr = f"{t * 1e3:.3f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"
        print(f"{name:<{w}} {tstr:>10} {bw / 1e9:>8.2f} {fl / 1e9:>9.2f} {bound:>7} "
              + " ".join(f"{x:>{c}}" for x in cells) + f" {spread:>9}", file=out)
    print_paged_reads(runs, read_bw, out)
    return report_skips(skipped, out)


def print_paged_reads(runs, read_bw, out):
    """Each paged decode benchmark beside the read of its own pool in its block table's order, where
    the run has it: the fraction of what that layout lets any kernel read, after the fraction of the
    contiguous read stream above."""
    roofs = {}
    for name, r in runs.items():
        parts = name.split("/")
        if len(parts) == 3 and parts[:2] == ["baseline", "paged_read"] and not r.get("error_occurred"):
            roofs[parts[2]] = number(r, "bytes_per_second")
    rows = [(name, op_parts(name)) for name in runs]
    rows = [(name, paged_pool(p)) for name, p in rows if p and not runs[name].get("error_occurred")]
    rows = [(name, pool) for name, pool in rows if roofs.get(pool)]
    if not rows:
        return
    print("\npaged pools: each paged decode against baseline/paged_read/<pool>, the read of its own pool "
          "in its block table's order, nothing computed (the pool's elements; the kernel's bytes also count "
          "its scales and queries)", file=out)
    for name, pool in rows:
        bw, roof = number(runs[name], "bytes_per_second"), roofs[pool]
        of_read = f", pool read {roof / read_bw:.2f}x of the read stream" if read_bw else ""
        print(f"  {name}: {bw / 1e9:.2f} GB/s, {100 * bw / roof:.1f}% of paged read "
              f"({roof / 1e9:.2f} GB/s{of_read})", file=out)


def report_skips(rows, out):
    """Prints the benchmarks that did not run, split into skips (a reason of SKIP_PREFIXES: unsupported,
    unavailable) and failures; returns the failures."""
    failed = [(n, why) for n, why in rows if not why.startswith(SKIP_PREFIXES)]
    skipped = [(n, why) for n, why in rows if why.startswith(SKIP_PREFIXES)]
    for title, items in (("skipped", skipped), ("FAILED", failed)):
        if items:
            print(f"\n{title} ({len(items)}):", file=out)
            for name, why in items:
                print(f"  {name}: {why}", file=out)
    return failed


def collective_parts(name):
    """("cpu", "all_reduce", 4, 16777216) for collective/cpu/all_reduce_w4_16777216, the baselines'
    as ("baseline", "mpi_allreduce" | "host_memcpy", W, bytes); None for anything else."""
    parts = name.split("/")
    if parts[0] == "baseline" and len(parts) >= 2:
        parts = ["baseline", "baseline", parts[1]]
    if len(parts) < 3 or parts[0] not in ("collective", "baseline") or "_w" not in parts[2]:
        return None
    op, _, rest = parts[2].rpartition("_w")
    w, _, size = rest.partition("_")
    if not (w.isdigit() and size.isdigit()):
        return None
    return (parts[1] if parts[0] == "collective" else "baseline", op, int(w), int(size))


def size_str(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def rounds(row, key):
    """The row's value of `key` in each round (its repetitions), or its one value."""
    reps = row.get("_reps") or [row]
    return [number(r, key) for r in reps if key in r]


def median_of(row, key):
    values = rounds(row, key)
    return statistics.median(values) if values else None


def summarize_collective(data, out=sys.stdout):
    """The collective run's table: per size, each benchmark's busbw (the median of its rounds) beside
    MPI_Allreduce's and the memory copy's of the same size, measured in the same run. A ratio is the
    median of the rounds' own ratios: each round runs the two close together in time, so the load a
    round met weighs on both sides of its ratio."""
    runs = collapse(data.get("benchmarks", []))
    ctx = data.get("context", {})
    print(f"host: {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} cpus, {ctx.get('touchstone_world', '?')}, "
          f"backends {ctx.get('touchstone_backends', '?')}", file=out)
    if "load_average" in ctx:
        print(f"load average (1, 5, 15 min): {ctx['load_average']}", file=out)
    for key in sorted(k for k in ctx if k.startswith("touchstone_device_")):
        print(f"{key[len('touchstone_device_'):]}: {ctx[key]}", file=out)
    print(file=out)
    rows = {name: (collective_parts(name), r) for name, r in runs.items() if collective_parts(name)}
    ref = {(p[2], p[3], p[1]): r for p, r in rows.values() if p[0] == "baseline"}

    def paired(r, base):
        a, b = rounds(r, "busbw"), rounds(base, "busbw") if base else []
        if not a or len(a) != len(b) or not all(b):
            return None
        return statistics.median(x / y for x, y in zip(a, b))

    w = max([len(n) for n in rows] + [len("benchmark")])
    header = (f"{'benchmark':<{w}} {'size':>8} {'time':>10} {'algbw GB/s':>10} {'busbw GB/s':>10} "
              f"{'of MPI_Allreduce':>16} {'of memcpy':>9} {'staging':>12} {'rounds busbw GB/s':>18}")
    print(header, file=out)
    print("-" * len(header), file=out)
    failed = []
    for name, (p, r) in sorted(rows.items(), key=lambda kv: (kv[1][0][3], kv[1][0][0] != "baseline", kv[0])):
        if r.get("error_occurred"):
            failed.append((name, r.get("error_message", "")))
            continue
        t = seconds(r)
        of_mpi = paired(r, ref.get((p[2], p[3], "mpi_allreduce"))) if p[1] == "all_reduce" else None
        of_copy = paired(r, ref.get((p[2], p[3], "host_memcpy")))
        staging = pct(median_of(r, "staging_fraction"))
        if staging and median_of(r, "mapped"):
            staging += " map"  # the share of mapping the device's buffers, not of copying them
        reps = rounds(r, "busbw")
        spread = f"{min(reps) / 1e9:.3f}-{max(reps) / 1e9:.3f} ({len(reps)})" if len(reps) > 1 else ""
        tstr = f"{t * 1e3:.3f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"
        print(f"{name:<{w}} {size_str(p[3]):>8} {tstr:>10} {median_of(r, 'algbw') / 1e9:>10.3f} "
              f"{median_of(r, 'busbw') / 1e9:>10.3f} {pct(of_mpi):>16} {pct(of_copy):>9} {staging:>12} {spread:>18}",
              file=out)
    return report_skips(failed, out)


def is_collective_run(data):
    return any(collective_parts(short_name(b.get("run_name", b["name"]))) for b in data.get("benchmarks", []))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="path to touchstone-bench (default: build*/bench/touchstone-bench)")
    ap.add_argument("--mpiexec", help="run touchstone-bench under this MPI launcher: the collective family")
    ap.add_argument("--ranks", type=int, default=2, help="with --mpiexec: the number of ranks (default 2)")
    ap.add_argument("--filter", default=DEFAULT_FILTER,
                    help="benchmark regex (default: every op on the cpu backend); baselines are always added")
    ap.add_argument("--min-time", default="0.1", help="--benchmark_min_time per benchmark (default 0.1 s)")
    ap.add_argument("--interleave", type=int, metavar="N",
                    help="N repetitions of every benchmark and baseline, randomly interleaved, medians reported")
    ap.add_argument("--json", help="read this touchstone-bench JSON instead of running it")
    ap.add_argument("--save", help="also write the run's JSON here")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a benchmark failed (not merely unsupported)")
    ap.add_argument("extra", nargs="*", help="more touchstone-bench flags, after --")
    args = ap.parse_args()
    if args.json:
        with open(args.json) as f:
            data = json.load(f)
    else:
        data = run_bench(args)
    failed = summarize_collective(data) if is_collective_run(data) else summarize(data)
    if not data.get("benchmarks"):
        print("bench-summary: no benchmark matched", file=sys.stderr)
        return 1
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
