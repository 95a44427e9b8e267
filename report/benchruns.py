"""touchstone-bench runs as data, shared by ci/bench-summary.py and `touchstone report`.

A run is touchstone-bench's Google Benchmark JSON (--benchmark_format=json or --benchmark_out), or a
record of `touchstone bench record`: the same JSON with a top-level "touchstone" key holding the
commit, the build type, the devices and the machine's limits measured in that run.

Every op benchmark is set against the limits of the machine that ran it, in one of three classes:
- compute-bound: its arithmetic intensity (flops / bytes, from the op's cost model) is at or above the
  machine balance (FMA peak / triad bandwidth); judged as a fraction of OpenBLAS SGEMM at m512 (and of
  the FMA peak);
- read-dominated: memory-bound, and it writes less than a tenth of what it reads (the benchmark's
  write_share counter, core/op.h kReadDominated: a decode GEMV, KV decode); judged as a fraction of the
  read-only stream, where the run measured one (else of the triad, and named so);
- streaming: memory-bound otherwise (a norm, an elementwise op); judged as a fraction of the STREAM triad.
That fraction is the run's "normalised" figure, named with its roof: it is what stays comparable
between a noisy run and a quiet one, or between two machines. Runs from before the write_share
counter have no read-dominated class: their memory-bound benchmarks are streaming.

A device backend whose own roofs the run measured (baseline/device_{read,copy,fma_f32,fma_f16}/<backend>,
bench/device_roofs.cpp) is judged against them instead of the host's: its copy stream plays the
triad's part, its read stream the read stream's, its F32 FMA peak the FMA peak's, and CLBlast SGEMM
(opencl only: it runs on the opencl device) OpenBLAS's. Every fraction carries the name of its roof.

No plotting here: this module needs only the standard library.
"""
import json
import math
import os
import statistics
from dataclasses import dataclass, field
from typing import Optional

TRIAD = "baseline/stream_triad"
READ = "baseline/stream_read"  # a read-only stream: the ceiling of kernels that read and hardly write
FMA = "baseline/fma_peak"
SGEMM_PRESET = "m512_n4096_k4096"
SGEMM = "baseline/cblas_sgemm/" + SGEMM_PRESET
CLBLAST_SGEMM = "baseline/clblast_sgemm/" + SGEMM_PRESET
BASELINE_FILTER = "^baseline/(stream_triad|stream_read|fma_peak|cblas_sgemm/m512_n4096_k4096)"
# A device backend's roofs: baseline/device_<roof>/<backend>.
DEVICE_ROOFS = ("device_read", "device_copy", "device_fma_f32", "device_fma_f16")
READ_DOMINATED = 0.1  # write_share below which a memory-bound benchmark is judged by the read stream
MEMORY_CLASSES = ("read", "stream")


def device_roof_filter(backends):
    """The benchmark regex of the device roofs of these backends (None for none)."""
    backends = sorted(set(backends))
    # Google Benchmark matches the full name, "/manual_time" included: the backend ends at a slash.
    return f"^baseline/device_[a-z0-9_]+/({'|'.join(backends)})(/|$)" if backends else None

# Reasons touchstone-bench gives for a benchmark that cannot run here, as opposed to one that failed.
SKIP_PREFIXES = ("unsupported: ", "backend unavailable: ", "unavailable: ")
RECORD_FORMAT = 1
# The per-repetition figures a collapsed benchmark carries as medians.
_MEDIAN_FIELDS = ("real_time", "cpu_time", "bytes_per_second", "flops", "items_per_second")


class RunError(Exception):
    """A file that is not a usable benchmark run; the message is one line naming the file."""


def short_name(name):
    return name[: -len("/manual_time")] if name.endswith("/manual_time") else name


def op_parts(name):
    """(op, backend, preset, dtype) of an op benchmark's short name; None for a baseline or a stranger."""
    parts = name.split("/")
    if len(parts) != 4 or parts[0] == "baseline":
        return None
    return tuple(parts)


def seconds(row):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row.get("time_unit", "ns")]
    return row["real_time"] * scale


def number(row, key):
    """A counter as a float; 0.0 when absent or NaN (Google Benchmark writes NaN for the cv of a zero counter)."""
    v = row.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v):
        return 0.0
    return float(v)


def collapse(benchmarks):
    """One row per benchmark, in run order: medians over its repetitions.

    With repetitions Google Benchmark writes one "iteration" row per repetition and then aggregate rows
    (mean, median, stddev, cv) computed from them; a run made with --benchmark_report_aggregates_only
    has the aggregates only. The median is taken from the repetitions when they are there, otherwise
    the "median" aggregate is used, so nothing is counted twice. A benchmark with any failed repetition
    is reported as failed. Each row keeps its repetitions under "_reps" (empty for aggregates only).
    """
    order, reps, medians = [], {}, {}
    for r in benchmarks:
        name = short_name(r.get("run_name", r["name"]))
        if name not in reps:
            order.append(name)
            reps[name] = []
        if r.get("run_type") == "aggregate":
            if r.get("aggregate_name") == "median":
                medians[name] = r
        else:
            reps[name].append(r)
    rows = {}
    for name in order:
        its = reps[name]
        failed = [r for r in its if r.get("error_occurred")]
        if failed:
            row = dict(failed[0])
        elif its:
            row = dict(its[0])
            for key in _MEDIAN_FIELDS:
                if any(key in r for r in its):
                    row[key] = statistics.median(number(r, key) for r in its)
        elif name in medians:
            row = dict(medians[name])
        else:
            continue  # only mean / stddev aggregates: no median to report
        row["_reps"] = [] if failed else its
        rows[name] = row
    return rows


def rate(rows, name, key):
    r = rows.get(name)
    return None if r is None or r.get("error_occurred") else (number(r, key) or None)


# The names of the roofs each fraction is taken of: the host's, and a device's (where "triad" is its
# copy stream, "sgemm" CLBlast's on the opencl device, "fma" its F32 FMA peak).
HOST_ROOF_NAMES = {"triad": "triad", "read": "read", "sgemm": "sgemm", "fma": "fma"}
DEVICE_ROOF_NAMES = {"triad": "dev copy", "read": "dev read", "sgemm": "clblast", "fma": "dev fma"}


@dataclass
class DeviceRoofs:
    """One device backend's own roofs in bytes/s and flop/s (None where not measured)."""
    read: Optional[float] = None
    copy: Optional[float] = None
    fma_f32: Optional[float] = None
    fma_f16: Optional[float] = None

    def any(self):
        return bool(self.read or self.copy)


@dataclass
class Limits:
    """The machine's limits, in bytes/s and flop/s; None where the run did not measure one."""
    triad: Optional[float] = None
    fma: Optional[float] = None
    read: Optional[float] = None     # read-only stream, where the run (or the record) measured it
    sgemm: Optional[float] = None    # OpenBLAS SGEMM at m512: the compute-bound figures' yardstick
    clblast: Optional[float] = None  # CLBlast SGEMM at m512 on the OpenCL device, where built
    source: str = "baselines"        # "record" when a bench record's own limits were used
    devices: dict = field(default_factory=dict)  # backend -> DeviceRoofs, where the run measured them
    names: dict = field(default_factory=lambda: dict(HOST_ROOF_NAMES))  # the roof each fraction is of
    device: str = ""                 # the backend whose device roofs these are ("": the host's)

    @property
    def balance(self):
        return self.fma / self.triad if self.fma and self.triad else None

    def for_backend(self, backend):
        """The limits a benchmark of `backend` is judged by: its device's roofs where the run has them
        (a roof it lacks stays None rather than borrowing the host's), else the host's."""
        d = self.devices.get(backend)
        if not d or not d.any():
            return self
        return Limits(triad=d.copy, fma=d.fma_f32, read=d.read, sgemm=self.clblast if backend == "opencl" else None,
                      clblast=self.clblast, source=self.source, devices=self.devices,
                      names=dict(DEVICE_ROOF_NAMES), device=backend)


def device_roofs_from_baselines(rows):
    """backend -> DeviceRoofs from the run's baseline/device_<roof>/<backend> rows that succeeded."""
    out = {}
    for name, row in rows.items():
        parts = name.split("/")
        if len(parts) != 3 or parts[0] != "baseline" or parts[1] not in DEVICE_ROOFS or row.get("error_occurred"):
            continue
        d = out.setdefault(parts[2], DeviceRoofs())
        roof = parts[1][len("device_"):]
        setattr(d, roof, number(row, "flops" if roof.startswith("fma") else "bytes_per_second") or None)
    return out


def limits_from_baselines(rows):
    return Limits(triad=rate(rows, TRIAD, "bytes_per_second"), fma=rate(rows, FMA, "flops"),
                  read=rate(rows, READ, "bytes_per_second"), sgemm=rate(rows, SGEMM, "flops"),
                  clblast=rate(rows, CLBLAST_SGEMM, "flops"), devices=device_roofs_from_baselines(rows))


@dataclass
class Figure:
    """One op benchmark against its machine's limits (fractions are None where they do not apply)."""
    bound: str  # "read", "stream" (both memory-bound), "compute", or "?" when the run has no balance
    intensity: float
    of_triad: Optional[float]
    of_sgemm: Optional[float]
    of_peak: Optional[float]
    of_read: Optional[float] = None  # memory-bound figures: of the read-only stream, where measured
    names: dict = field(default_factory=lambda: dict(HOST_ROOF_NAMES))  # roof of each fraction

    @property
    def memory_bound(self):
        return self.bound in MEMORY_CLASSES

    @property
    def roof(self):
        """The key (in names) of the roof the normalised figure is a fraction of; None without one."""
        if self.bound == "read" and self.of_read is not None:
            return "read"
        return "triad" if self.memory_bound else "sgemm" if self.bound == "compute" else None

    @property
    def roof_name(self):
        return self.names[self.roof] if self.roof else ""

    @property
    def normalised(self):
        return {"read": self.of_read, "triad": self.of_triad, "sgemm": self.of_sgemm}.get(self.roof)


def classify(row, limits, bytes_per_second=None, flops=None):
    """The figure of one op benchmark row (or of one repetition's rates, when given)."""
    bw = number(row, "bytes_per_second") if bytes_per_second is None else bytes_per_second
    fl = number(row, "flops") if flops is None else flops
    intensity = fl / bw if bw else float("inf")
    balance = limits.balance
    share = row.get("write_share")
    read_dominated = isinstance(share, (int, float)) and not isinstance(share, bool) and share < READ_DOMINATED
    if not balance:
        bound = "?"
    elif intensity >= balance:
        bound = "compute"
    else:
        bound = "read" if read_dominated else "stream"
    memory = bound in MEMORY_CLASSES
    of_triad = bw / limits.triad if limits.triad and bw and bound != "compute" else None
    of_sgemm = fl / limits.sgemm if limits.sgemm and fl and not memory else None
    of_peak = fl / limits.fma if limits.fma and fl else None
    of_read = bw / limits.read if limits.read and bw and bound != "compute" else None
    return Figure(bound, intensity, of_triad, of_sgemm, of_peak, of_read, dict(limits.names))


def classify_named(name, row, limits):
    """classify() against the limits the benchmark `name` is judged by (its device's, where measured)."""
    parts = op_parts(name)
    return classify(row, limits.for_backend(parts[1]) if parts else limits)


def normalised_reps(row, limits):
    """The normalised figure of each repetition (the spread the median hides); [] without repetitions."""
    out = []
    for r in row.get("_reps", []):
        f = classify(row, limits, number(r, "bytes_per_second"), number(r, "flops")).normalised
        if f is not None:
            out.append(f)
    return out


@dataclass
class Run:
    path: str
    context: dict
    record: Optional[dict]  # the "touchstone" key of a bench record
    rows: dict              # short name -> collapsed row
    limits: Limits
    label: str = ""         # set by label_runs: short, unique among the runs of one report
    devices: list = field(default_factory=list)

    def op_rows(self):
        """(name, row, op, backend, preset, dtype) of every op benchmark that ran."""
        for name, row in self.rows.items():
            parts = op_parts(name)
            if parts and not row.get("error_occurred"):
                yield (name, row) + parts

    def skipped_and_failed(self):
        skipped, failed = [], []
        for name, row in self.rows.items():
            if row.get("error_occurred"):
                why = row.get("error_message", "")
                (skipped if why.startswith(SKIP_PREFIXES) else failed).append((name, why))
        return skipped, failed

    def backends(self):
        seen = []
        for _, _, _, backend, _, _ in self.op_rows():
            if backend not in seen:
                seen.append(backend)
        return seen


def _record_limits(record, rows, path):
    lim = record.get("limits")
    if not isinstance(lim, dict):
        raise RunError(f"{path}: the record has no \"limits\" object")

    def positive(v, what):
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
            raise RunError(f"{path}: the record's limit {what} is {json.dumps(v)}, not a positive number")
        return float(v)

    sgemm = lim.get("sgemm_flops")
    if not isinstance(sgemm, dict) or SGEMM_PRESET not in sgemm:
        raise RunError(f"{path}: the record's limits have no sgemm_flops.{SGEMM_PRESET}")
    # The read stream is optional: records made before it have none, and 0 says the run did not measure it.
    read = lim.get("stream_read_bytes_per_second")
    if read is not None and read != 0:
        read = positive(read, "stream_read_bytes_per_second")
    return Limits(triad=positive(lim.get("stream_triad_bytes_per_second"), "stream_triad_bytes_per_second"),
                  read=read or rate(rows, READ, "bytes_per_second"),
                  fma=positive(lim.get("fma_peak_flops"), "fma_peak_flops"),
                  sgemm=positive(sgemm[SGEMM_PRESET], f"sgemm_flops.{SGEMM_PRESET}"),
                  clblast=rate(rows, CLBLAST_SGEMM, "flops"), source="record",
                  devices=_record_devices(lim, rows, path))


def _record_devices(lim, rows, path):
    """A record's device roofs ("device_roofs": {backend: {read, copy, fma_f32, fma_f16}}, each in bytes/s or
    flop/s), or the rows' own where the record has none (a record made before it kept them)."""
    devs = lim.get("device_roofs")
    if devs is None:
        return device_roofs_from_baselines(rows)
    if not isinstance(devs, dict):
        raise RunError(f"{path}: the record's device_roofs is not an object")
    out = {}
    for backend, roofs in devs.items():
        if not isinstance(roofs, dict):
            raise RunError(f"{path}: the record's device_roofs.{backend} is not an object")
        d = DeviceRoofs()
        for key, v in roofs.items():
            if key not in ("read", "copy", "fma_f32", "fma_f16"):
                raise RunError(f"{path}: the record's device_roofs.{backend} has an unknown roof {json.dumps(key)}")
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise RunError(f"{path}: the record's device_roofs.{backend}.{key} is {json.dumps(v)}, not a "
                               "positive number")
            setattr(d, key, float(v))
        out[backend] = d
    return out


_TEXT_FIELDS = ("run_name", "run_type", "aggregate_name", "label", "error_message")


def _malformed(r):
    """Why a benchmark row cannot be read, or None: the fields this module and the page rely on."""
    if not isinstance(r, dict):
        return "not an object"
    if not isinstance(r.get("name"), str):
        return "no \"name\""
    if not isinstance(r.get("real_time"), (int, float)) or isinstance(r.get("real_time"), bool):
        return "no numeric \"real_time\""
    if r.get("time_unit", "ns") not in ("ns", "us", "ms", "s"):
        return f"unknown time_unit {json.dumps(r.get('time_unit'))}"
    bad = [k for k in _TEXT_FIELDS if k in r and not isinstance(r[k], str)]
    return f"\"{bad[0]}\" is not text" if bad else None


def parse_run(data, path):
    """A Run from already-decoded JSON; RunError when it is not a touchstone-bench run."""
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise RunError(f"{path}: not a benchmark run (no \"benchmarks\" list; expected touchstone-bench "
                       "--benchmark_format=json output or a `touchstone bench record`)")
    benchmarks = data["benchmarks"]
    if not benchmarks:
        raise RunError(f"{path}: the run holds no benchmarks")
    for i, r in enumerate(benchmarks):
        why = _malformed(r)
        if why:
            raise RunError(f"{path}: benchmark {i} is malformed ({why})")
    rows = collapse(benchmarks)
    if not any(op_parts(n) or n.startswith("baseline/") for n in rows):
        raise RunError(f"{path}: no touchstone-bench benchmark in the run (names are "
                       "<op>/<backend>/<preset>/<dtype> or baseline/...)")
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    record = data.get("touchstone")
    if record is not None:
        if not isinstance(record, dict):
            raise RunError(f"{path}: its \"touchstone\" key is not an object (a bench record's is)")
        if record.get("format") != RECORD_FORMAT:
            fmt = record.get("format")
            raise RunError(f"{path}: record format {json.dumps(fmt)} is not {RECORD_FORMAT}, the one this "
                           "touchstone reads")
        limits = _record_limits(record, rows, path)
        devices = record.get("devices") if isinstance(record.get("devices"), list) else []
    else:
        limits = limits_from_baselines(rows)
        devices = [{"backend": k[len("touchstone_device_"):], "device": v} for k, v in context.items()
                   if k.startswith("touchstone_device_")]
    return Run(path=path, context=context, record=record, rows=rows, limits=limits, devices=devices)


def load_run(path):
    """Reads and checks one run file; RunError (one line naming the file) for anything unusable."""
    if not os.path.exists(path):
        raise RunError(f"{path}: no such file")
    if os.path.isdir(path):
        raise RunError(f"{path}: is a directory, not a benchmark run")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise RunError(f"{path}: cannot read: {e.strerror}") from None
    if not raw.strip():
        raise RunError(f"{path}: empty file (no benchmark run in it)")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise RunError(f"{path}: not JSON (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        raise RunError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    return parse_run(data, path)


def describe_machine(run):
    """The machine a run was taken on, in words: host, cpus, clock."""
    c = run.context
    mhz = c.get("mhz_per_cpu")
    return f"{c.get('host_name', '?')}, {c.get('num_cpus', '?')} cpus" + (f" at {mhz} MHz" if mhz else "")


def label_runs(runs):
    """Short labels that tell the runs apart: the commit where a record names one, the machine and date
    otherwise; a number is added where two would still read the same."""
    labels = []
    for run in runs:
        c = run.context
        date = str(c.get("date", ""))[:16].replace("T", " ")
        mhz = c.get("mhz_per_cpu")
        machine = f"{c.get('host_name', '?')}{f' {mhz} MHz' if mhz else ''}"
        commit = str(run.record.get("commit", ""))[:8] if run.record else ""
        if commit:
            commit += "+dirty" if run.record.get("dirty") else ""
            labels.append(f"{commit} on {machine}")
        else:
            labels.append(f"{machine}, {date}")
    for i, run in enumerate(runs):
        same = [j for j, lab in enumerate(labels) if lab == labels[i]]
        run.label = labels[i] + (f" (#{i + 1})" if len(same) > 1 else "")
    return runs
