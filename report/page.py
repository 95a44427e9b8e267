"""The report's HTML: tables written here, pictures referenced by file name (they sit beside index.html).

Everything the page shows is in the page or in those files: no script, no font or style from the
network, so it opens the same offline, from a CI artifact or a copied folder.
"""
import os
from html import escape

from benchruns import classify, classify_named, describe_machine, number, seconds

STYLE = """
body { font-family: sans-serif; margin: 1.5em 2em; color: #222; max-width: 1400px; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .85em; }
th, td { border: 1px solid #ccc; padding: .2em .5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.yes { background: #dff0d8; } td.partial { background: #fcf3cf; } td.no { background: #f6d5d5; }
.why { color: #666; font-size: .85em; } .better { color: #1a7f37; } .worse { color: #c62828; }
div.devices { min-width: 16em; }
img { max-width: 100%; display: block; margin: .5em 0 1em; } .note { color: #555; font-size: .9em; }
"""


def _gb(x):
    return f"{x / 1e9:.1f}" if x else "n/a"


def _pct(x):
    return "" if x is None else f"{100 * x:.1f}%"


def _time(row):
    t = seconds(row)
    return f"{t * 1e3:.3f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} us"


def _table(header, rows, numeric=()):
    out = ["<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td class=\"num\">{c}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(r)) + "</tr>")
    return "\n".join(out) + "</table>"


def runs_table(runs):
    rows = []
    for run in runs:
        rec = run.record or {}
        lim = run.limits
        commit = escape(str(rec.get("commit", ""))[:12]) + (" (dirty)" if rec.get("dirty") else "")
        devices = "<br>".join(escape(f"{d.get('backend', '?')}: {d.get('device', '?')}"
                                     + (f" ({d['driver']})" if d.get("driver") else ""))
                              for d in run.devices if isinstance(d, dict))
        roofs = "<br>".join(escape(f"{b}: read {_gb(d.read)} GB/s, copy {_gb(d.copy)} GB/s, FMA {_gb(d.fma_f32)} "
                                   f"GFLOP/s F32, {_gb(d.fma_f16)} F16")
                            for b, d in sorted(lim.devices.items()))
        rows.append([escape(run.label), f"<span title=\"{escape(run.path)}\">{escape(os.path.basename(run.path))}</span>", commit or "&mdash;", escape(str(rec.get("build_type", ""))),
                     escape(describe_machine(run)), escape(str(run.context.get("date", ""))), f"<div class=\"devices\">{devices}</div>",
                     _gb(lim.triad), _gb(lim.fma), _gb(lim.sgemm), _gb(lim.clblast),
                     f"{lim.balance:.1f}" if lim.balance else "n/a", roofs or "&mdash;",
                     "the record" if lim.source == "record" else "the run's baselines"])
    return _table(["run", "file", "commit", "build", "machine", "date", "devices", "triad GB/s", "FMA peak GFLOP/s",
                   "SGEMM m512 GFLOP/s", "CLBlast m512 GFLOP/s", "balance FLOP/byte", "device roofs", "limits from"], rows,
                  numeric={7, 8, 9, 10, 11})


def benchmarks_table(run, backend):
    rows = []
    lim = run.limits.for_backend(backend)  # a device backend's own roofs where the run measured them
    for name, row, op, b, preset, dtype in run.op_rows():
        if b != backend:
            continue
        f = classify(row, lim)
        reps = len(row.get("_reps", []))
        rows.append([escape(f"{op} {preset} {dtype}"), escape(row.get("label", "")), _time(row),
                     f"{number(row, 'bytes_per_second') / 1e9:.2f}", f"{number(row, 'flops') / 1e9:.2f}",
                     "" if f.intensity == float("inf") else f"{f.intensity:.3g}", f.bound,
                     _pct(f.of_read), _pct(f.of_triad), _pct(f.of_sgemm), _pct(f.of_peak),
                     str(reps) if reps else "median"])
    n = lim.names
    return _table(["benchmark", "parameters", "time (median)", "GB/s", "GFLOP/s", "FLOP/byte", "bound", f"of {n['read']}",
                   f"of {n['triad']}", f"of {n['sgemm']}", f"of {n['fma']} peak", "repetitions"], rows,
                  numeric={2, 3, 4, 5, 7, 8, 9, 10})


def skipped_list(run):
    skipped, failed = run.skipped_and_failed()
    out = []
    for title, items in (("Failed", failed), ("Skipped", skipped)):
        if items:
            out.append(f"<p><b>{title} ({len(items)})</b></p><ul>"
                       + "".join(f"<li>{escape(n)}: <span class=\"why\">{escape(w)}</span></li>" for n, w in items)
                       + "</ul>")
    return "\n".join(out)


def comparison_table(runs, names):
    rows = []
    for name in names:
        cells = [escape(name)]
        base = None
        for i, run in enumerate(runs):
            row = run.rows.get(name)
            if row is None or row.get("error_occurred"):
                cells.append("&mdash;")
                continue
            f = classify_named(name, row, run.limits)
            v = f.normalised
            rate = f"{number(row, 'bytes_per_second') / 1e9:.2f} GB/s" if f.memory_bound else \
                f"{number(row, 'flops') / 1e9:.2f} GFLOP/s"
            text = f"{_pct(v)} of {f.roof_name} ({rate}, {_time(row)})"
            if i == 0:
                base = v
            elif v is not None and base:
                change = v / base - 1
                cls = "better" if change > 0 else "worse"
                text += f" <span class=\"{cls}\">{100 * change:+.1f}%</span>"
            cells.append(text)
        rows.append(cells)
    return _table(["benchmark"] + [run.label for run in runs], rows)


def comparison_note(runs):
    return (f"<p class=\"note\">Each figure is normalised by its own run's machine limit (read-dominated: of the "
            f"read-only stream, streaming: of the triad bandwidth, compute-bound: of OpenBLAS SGEMM; the roof is "
            f"named beside each figure), so runs on different machines compare; the change "
            f"is against the first run ({escape(runs[0].label)}). One pair of medians is no significance test: "
            f"<code>touchstone bench compare</code> judges regressions over the repetitions.</p>")


def support_table(support):
    if support is None:
        return "<p class=\"note\">No support matrix: run the report through <code>touchstone report</code>.</p>"
    backends = [b["name"] for b in support["backends"]]
    avail = "".join(f"<li><b>{escape(b['name'])}</b>: {escape(b['detail']) if b['available'] else 'unavailable here: ' + escape(b['detail'])}</li>"
                    for b in support["backends"])
    rows = []
    for r in support["rows"]:
        cells = [escape(r["variant"]), escape(r["family"])]
        for b in backends:
            c = r["cells"].get(b, {})
            status = c.get("status", "no")
            text = "yes" if status == "yes" else f"partial: {c.get('supported')} of {c.get('cases')} cases" \
                if status == "partial" else "no"
            why = f"<br><span class=\"why\">{escape(c.get('reason', ''))}</span>" if status != "yes" else ""
            cells.append((status, text + why))
        rows.append(cells)
    head = "<tr><th>op</th><th>family</th>" + "".join(f"<th>{escape(b)}</th>" for b in backends) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r[:2])
                   + "".join(f"<td class=\"{s}\">{t}</td>" for s, t in r[2:]) + "</tr>" for r in rows)
    return (f"<p class=\"note\">From <code>touchstone list --json</code> of the build that wrote this report: "
            f"an op (or a variant of it) per row; \"partial\" counts the conformance cases a backend takes.</p>"
            f"<ul>{avail}</ul><table>{head}{body}</table>")


def _slug(title, taken):
    base = "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-")[:40] or "section"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


def document(sections):
    """The page: a list of (heading level, title, html) sections, with a table of contents of the
    level-2 and level-3 headings (each heading an anchor: index.html#runs-side-by-side)."""
    taken, body, toc = set(), [], []
    for lvl, title, html in sections:
        if not title:
            body.append(html)
            continue
        slug = _slug(title, taken)
        body.append(f"<h{lvl} id=\"{slug}\">{escape(title)}</h{lvl}>\n{html}")
        if lvl == 2:
            toc.append([f"<a href=\"#{slug}\">{escape(title)}</a>", []])
        elif lvl == 3 and toc:
            toc[-1][1].append(f"<a href=\"#{slug}\">{escape(title.split(' (')[0])}</a>")
    contents = "<ul class=\"toc\">" + "".join(
        f"<li>{link}" + (f": {', '.join(subs)}" if subs else "") + "</li>" for link, subs in toc) + "</ul>"
    if body and body[0].startswith("<h1"):
        body.insert(1, contents)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>touchstone benchmark report</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def image(file, alt):
    return f"<img src=\"{escape(file)}\" alt=\"{escape(alt)}\">"
