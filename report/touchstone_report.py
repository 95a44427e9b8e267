#!/usr/bin/env python3
"""touchstone report RUN.json [RUN.json ...] -o DIR: an HTML page of benchmark runs.

DIR/index.html with its PNG pictures beside it: per run and backend a roofline (achieved GFLOP/s
against arithmetic intensity, with the machine's measured roofs) and the fraction of the machine's
limit of each op benchmark; with several runs, their normalised figures side by side; and the op x
backend support matrix (`touchstone list --json` of the binary given with --touchstone).

Runs are touchstone-bench JSON or `touchstone bench record` files. Every input is read and checked
before anything is written: bad input is one line on stderr and exit 1, and DIR is left as it was.
The page is drawn in a temporary folder and moved into DIR at the end.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source (or install) tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchruns import RunError, classify, label_runs, load_run  # noqa: E402


class ArgsError(RunError):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 1, as every touchstone command
        raise ArgsError(f"report: {message}")


def read_support(touchstone):
    """The support matrix from `touchstone list --json`, or None when no binary was named."""
    if not touchstone:
        return None
    try:
        proc = subprocess.run([touchstone, "list", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=600)
    except OSError as e:
        raise RunError(f"report: cannot run {touchstone} list --json: {e.strerror}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise RunError(f"report: {touchstone} list --json failed: {last}")
    try:
        support = json.loads(proc.stdout)
        support["backends"], support["rows"]  # noqa: B018 (the keys the page reads)
    except (ValueError, KeyError, TypeError):
        raise RunError(f"report: {touchstone} list --json printed no support matrix") from None
    return support


def comparable(runs, backend):
    """Benchmarks of the backend that at least two runs classify, in first-seen order."""
    count = {}
    for run in runs:
        for name, row, _, b, _, _ in run.op_rows():
            if b == backend and classify(row, run.limits.for_backend(b)).normalised is not None:
                count[name] = count.get(name, 0) + 1
    return [n for n, c in count.items() if c >= 2]


def comparison_sections(runs, folder, page, plots):
    sections = [(2, "Runs side by side", page.comparison_note(runs))]
    backends = []
    for run in runs:
        backends += [b for b in run.backends() if b not in backends]
    for backend in backends:
        names = comparable(runs, backend)
        if not names:
            sections.append((3, backend, "<p class=\"note\">No benchmark of this backend in two runs.</p>"))
            continue
        pic = f"compare-{backend}.png"
        plots.comparison(runs, backend, names, os.path.join(folder, pic))
        sections.append((3, backend, page.image(pic, f"{backend}: runs side by side") + page.comparison_table(runs, names)))
    return sections


def backend_section(run, i, backend, folder, page, plots):
    html = []
    if backend != "cpu":
        html.append("<p class=\"note\">The triad, FMA and OpenBLAS roofs are the host CPU's, measured in the same run"
                    + ("; the CLBlast line is the OpenCL device's own SGEMM" if backend == "opencl" else "") + ".</p>")
    roof = f"roofline-run{i}-{backend}.png"
    left_out = plots.roofline(run, backend, os.path.join(folder, roof))
    html.append(page.image(roof, f"{backend} roofline of {run.label}"))
    if left_out:
        html.append("<p class=\"note\">Not on the roofline (no flops or no bytes in the cost model; they are in the "
                    "bars and the table): " + ", ".join(page.escape(n) for n in left_out) + "</p>")
    bars = f"fractions-run{i}-{backend}.png"
    if plots.fractions(run, backend, os.path.join(folder, bars)):
        html.append(page.image(bars, f"{backend} fraction of limit of {run.label}"))
    else:
        html.append("<p class=\"note\">No fractions of limit: the run has no triad and FMA baselines to tell "
                    "memory-bound from compute-bound (touchstone-bench's filter left baseline/ out).</p>")
    html.append("<details><summary>the figures</summary>" + page.benchmarks_table(run, backend) + "</details>")
    device = next((d.get("device", "") for d in run.devices if isinstance(d, dict) and d.get("backend") == backend), "")
    return (3, backend + (f" ({device})" if device else ""), "\n".join(html))


def render(runs, support, folder):
    # Imported here: reading and checking the inputs needs no matplotlib.
    import page
    import plots

    sections = [(1, "touchstone benchmark report", ""), (2, "Runs", page.runs_table(runs))]
    if len(runs) > 1:  # first: with several runs, the differences are what the reader came for
        sections += comparison_sections(runs, folder, page, plots)
    for i, run in enumerate(runs, 1):
        sections.append((2, f"Run {run.label}", ""))
        if not run.backends():
            sections.append((0, "", "<p class=\"note\">No op benchmark ran in this run.</p>"))
        sections += [backend_section(run, i, b, folder, page, plots) for b in run.backends()]
        sections.append((0, "", page.skipped_list(run)))
    sections.append((2, "Op support by backend", page.support_table(support)))
    with open(os.path.join(folder, "index.html"), "w", encoding="utf-8") as f:
        f.write(page.document(sections))


def publish(folder, out):
    """Moves the finished page into `out` (created if missing; files of an earlier report replaced)."""
    if not os.path.exists(out):
        parent = os.path.dirname(os.path.abspath(out))
        os.makedirs(parent, exist_ok=True)
        shutil.move(folder, out)
        return
    for name in os.listdir(folder):
        os.replace(os.path.join(folder, name), os.path.join(out, name))


def main(argv):
    ap = Parser(prog="touchstone report", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", metavar="RUN.json")
    ap.add_argument("-o", "--out", help="the folder to write index.html and its pictures into")
    ap.add_argument("--touchstone", help="the touchstone binary whose `list --json` gives the support matrix")
    try:
        args = ap.parse_args(argv)
        if not args.runs:
            raise RunError("report: no run given (touchstone report RUN.json [RUN.json ...] -o DIR)")
        if args.out is None or not args.out.strip():
            raise RunError("report: no output folder (-o DIR)")
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise RunError(f"report: {args.out} exists and is not a folder")
        runs = label_runs([load_run(p) for p in args.runs])
        support = read_support(args.touchstone)
        folder = tempfile.mkdtemp(prefix="touchstone-report.")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(folder, 0o777 & ~umask)  # mkdtemp's 0700 would follow the folder into DIR
        try:
            render(runs, support, folder)
            publish(folder, args.out)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    except RunError as e:
        print(f"touchstone: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"touchstone: report: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(os.path.join(args.out, "index.html"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
