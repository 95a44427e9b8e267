"""The report's pictures, drawn with matplotlib (Agg, no display) and written as PNG files.

Each function takes data from benchruns and a path, draws one figure and closes it. Legends sit beside
the axes, never over the points.
"""
import itertools

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from benchruns import classify, normalised_reps, number  # noqa: E402

DPI = 100
BOUND_COLOURS = {"read": "#17becf", "stream": "#1f77b4", "compute": "#d62728", "?": "#7f7f7f"}
BOUND_NAMES = {"read": "read-dominated: fraction of the read-only stream",
               "stream": "streaming: fraction of STREAM triad", "compute": "compute-bound: fraction of OpenBLAS SGEMM m512",
               "?": "unclassified (the run has no triad or FMA baseline)"}


def _styles():
    """Distinct (colour, marker) pairs for up to 80 ops: the tab20 colours, then again with other markers."""
    colours = plt.get_cmap("tab20").colors
    return itertools.cycle([(c, m) for m in "o^sDvP*X" for c in colours])


def _bench_label(name):
    """"op preset dtype" of an op benchmark's name: the backend is the figure's."""
    op, _, preset, dtype = name.split("/")
    return f"{op} {preset} {dtype}"


def _save(fig, path):
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def roofline(run, backend, path):
    """Achieved GFLOP/s against arithmetic intensity for the backend's op benchmarks, with the machine's
    measured roofs. Returns the benchmarks left out (no flops or no bytes in the cost model: a log axis
    has no place for them)."""
    lim = run.limits.for_backend(backend)  # a device backend's own roofs where the run measured them
    mem_roof = f"{backend} device copy" if lim.device else "STREAM triad"
    points, left_out = {}, []
    for name, row, op, b, preset, dtype in run.op_rows():
        if b != backend:
            continue
        f = classify(row, lim)
        gflops = number(row, "flops") / 1e9
        if gflops <= 0 or not (0 < f.intensity < float("inf")):
            left_out.append(name)
            continue
        points.setdefault(op, []).append((f.intensity, gflops))
    fig, ax = plt.subplots(figsize=(10, 5.5))
    xs = [x for pts in points.values() for x, _ in pts]
    ys = [y for pts in points.values() for _, y in pts]
    roofs = [r for r in (lim.fma, lim.sgemm, lim.clblast if backend == "opencl" else None) if r]
    ridge = lim.balance
    lo = min(xs + ([ridge] if ridge else []), default=0.1) / 4
    hi = max(xs + ([ridge] if ridge else []), default=100) * 4
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    if lim.triad:
        peak = lim.fma or max(roofs, default=None)
        ax.plot(grid, [min(lim.triad * x, peak) / 1e9 if peak else lim.triad * x / 1e9 for x in grid], "k-", lw=2,
                label=f"roofline: {mem_roof} {lim.triad / 1e9:.1f} GB/s"
                      + (f", {'device F32 ' if lim.device else ''}FMA peak {lim.fma / 1e9:.0f} GFLOP/s" if lim.fma else ""))
    if lim.device and lim.read:
        ax.plot(grid, [min(lim.read * x, lim.fma or float("inf")) / 1e9 for x in grid], color="tab:green", ls="-.", lw=1.2,
                label=f"{backend} device read stream {lim.read / 1e9:.1f} GB/s")
    elif lim.fma:
        ax.axhline(lim.fma / 1e9, color="k", lw=2, label=f"FMA peak {lim.fma / 1e9:.0f} GFLOP/s")
    if lim.sgemm and not lim.device:
        ax.axhline(lim.sgemm / 1e9, color="0.35", ls="--", lw=1.2,
                   label=f"OpenBLAS SGEMM m512: {lim.sgemm / 1e9:.1f} GFLOP/s")
    if backend == "opencl" and lim.clblast:
        ax.axhline(lim.clblast / 1e9, color="tab:purple", ls=":", lw=1.5,
                   label=f"CLBlast SGEMM m512 (OpenCL device): {lim.clblast / 1e9:.1f} GFLOP/s")
    for (op, pts), (colour, marker) in zip(sorted(points.items()), _styles()):
        ax.scatter([x for x, _ in pts], [y for _, y in pts], color=colour, marker=marker, s=46, zorder=3,
                   edgecolors="black", linewidths=0.4, label=op)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    top = max(ys + [r / 1e9 for r in roofs], default=1) * 3
    bottom = min(min(ys, default=top / 1e3) / 5, top / 1e3)  # at least three decades, the lowest point inside
    ax.set_ylim(bottom, top)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved, from the op's cost model)")
    ax.set_ylabel("achieved GFLOP/s")
    ax.set_title(f"{backend}: roofline ({run.label})" + ("" if lim.triad or roofs else ": the run has no baselines, no roofs"))
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    _save(fig, path)
    return left_out


def fractions(run, backend, path):
    """One bar per op benchmark of the backend: its fraction of the machine's limit, coloured by what
    bounds it. Returns False when the backend has no classified benchmark (no picture written)."""
    bars = []
    for name, row, op, b, preset, dtype in run.op_rows():
        if b == backend:
            f = classify(row, run.limits.for_backend(backend))
            if f.normalised is not None:
                # A read-dominated benchmark of a run without a read stream is judged by the triad.
                bars.append((f"{op} {preset} {dtype}", f.normalised, f.bound if f.roof != "triad" else "stream"))
    if not bars:
        return False
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(bars) + 1.4))
    ys = range(len(bars))
    ax.barh(ys, [100 * v for _, v, _ in bars], color=[BOUND_COLOURS[b] for _, _, b in bars], height=0.7)
    for y, (_, v, _) in zip(ys, bars):
        ax.text(100 * v, y, f" {100 * v:.0f}%", va="center", fontsize=8)
    ax.set_yticks(list(ys), [label for label, _, _ in bars], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(100, color="k", lw=1, ls="--")
    ax.set_xlim(0, max(110, 115 * max(v for _, v, _ in bars)))
    ax.set_xlabel("fraction of this machine's limit (%)")
    ax.set_title(f"{backend}: fraction of limit ({run.label})")
    shown = [b for b in ("read", "stream", "compute") if any(bound == b for _, _, bound in bars)]
    handles = [plt.Rectangle((0, 0), 1, 1, color=BOUND_COLOURS[b]) for b in shown]
    ax.legend(handles, [BOUND_NAMES[b] for b in shown], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8, frameon=False)
    ax.grid(True, axis="x", alpha=0.25)
    _save(fig, path)
    return True


def comparison(runs, backend, names, path):
    """Grouped bars: per benchmark (names), each run's normalised figure, whiskers from its slowest to
    its fastest repetition where the run has repetitions."""
    n = len(runs)
    height = 0.8 / n
    fig, ax = plt.subplots(figsize=(10, 0.22 * n * len(names) + 0.25 * len(names) + 1.6))
    colours = plt.get_cmap("tab10").colors
    top = 1.0
    for i, run in enumerate(runs):
        ys, vals, whiskers = [], [], []
        for j, name in enumerate(names):
            row = run.rows.get(name)
            if row is None or row.get("error_occurred"):
                continue
            lim = run.limits.for_backend(backend)
            v = classify(row, lim).normalised
            if v is None:
                continue
            ys.append(j - 0.4 + height * (i + 0.5))
            vals.append(100 * v)
            reps = normalised_reps(row, lim)
            if reps:  # a run of aggregates only has no spread to show
                whiskers.append((ys[-1], 100 * v, 100 * (v - min(reps)), 100 * (max(reps) - v)))
                top = max(top, max(reps))
            top = max(top, v)
        ax.barh(ys, vals, height=height * 0.92, color=colours[i % len(colours)], label=run.label)
        if whiskers:
            y, x, lo, hi = zip(*whiskers)
            ax.errorbar(x, y, xerr=[lo, hi], fmt="none", elinewidth=0.8, capsize=2, ecolor="0.2")
    ax.set_yticks(range(len(names)), [_bench_label(name) for name in names],
                  fontsize=8)
    ax.invert_yaxis()
    ax.axvline(100, color="k", lw=1, ls="--")
    ax.set_xlim(0, 110 * max(1.0, top))
    ax.set_xlabel("fraction of the run's own machine limit (%): read-dominated of the read stream, streaming of triad, compute-bound of SGEMM")
    ax.set_title(f"{backend}: runs side by side (whiskers: slowest to fastest repetition)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.grid(True, axis="x", alpha=0.25)
    _save(fig, path)
