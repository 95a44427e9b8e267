#!/usr/bin/env python3
"""`touchstone report` (ctest -L report): the page and its pictures from the checked-in runs, the run
reading shared with ci/bench-summary.py (medians, limits, classification), and bad input (one line on
stderr, exit 1, nothing written).

Needs TOUCHSTONE_CLI (the touchstone binary); the report itself needs python3-matplotlib.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(SOURCE, "tests", "data", "report")
PLAIN = os.path.join(DATA, "plain-2596mhz.json")
RECORD = os.path.join(DATA, "record-2445mhz.json")
CLI = os.environ.get("TOUCHSTONE_CLI", os.path.join(SOURCE, "build", "cli", "touchstone"))
sys.dont_write_bytecode = True  # no __pycache__ in the source (or install) tree
sys.path.insert(0, os.path.join(SOURCE, "report"))
import benchruns  # noqa: E402


def run_cli(*args, env=None):
    return subprocess.run([CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, **(env or {})})


def png_size(path):
    """(width, height) of a PNG file, from its IHDR chunk; an AssertionError for anything else."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def rep(name, real_time, bw, flops, index):
    return {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
            "repetitions": 3, "repetition_index": index, "real_time": real_time, "time_unit": "us",
            "bytes_per_second": bw, "flops": flops}


def aggregate(name, kind, real_time, bw, flops):
    return {"name": f"{name}/manual_time_{kind}", "run_name": name + "/manual_time", "run_type": "aggregate",
            "aggregate_name": kind, "real_time": real_time, "time_unit": "us", "bytes_per_second": bw,
            "flops": flops}


class RunData(unittest.TestCase):
    """benchruns: what the report and ci/bench-summary.py both read out of a run."""

    def test_median_of_repetitions_and_aggregates_not_counted_twice(self):
        name = "gemm/cpu/m1_n4096_k4096/F32"
        rows = benchruns.collapse([rep(name, 10, 1e9, 2e9, 0), rep(name, 30, 9e9, 1e9, 1), rep(name, 20, 5e9, 3e9, 2),
                                   aggregate(name, "mean", 20, 5e9, 2e9), aggregate(name, "median", 99, 99, 99)])
        self.assertEqual(list(rows), [name])
        r = rows[name]
        self.assertEqual((r["real_time"], r["bytes_per_second"], r["flops"]), (20, 5e9, 2e9))
        self.assertEqual(len(r["_reps"]), 3)

    def test_aggregates_only_take_the_median_row(self):
        name = "baseline/stream_triad"
        rows = benchruns.collapse([aggregate(name, "mean", 20, 4e9, 0), aggregate(name, "median", 18, 5e9, 0),
                                   aggregate(name, "stddev", 1, 1e8, 0)])
        self.assertEqual(rows[name]["bytes_per_second"], 5e9)
        self.assertEqual(rows[name]["_reps"], [])

    def test_one_failed_repetition_fails_the_benchmark(self):
        name = "gemm/vulkan/m1_n4096_k4096/F32"
        bad = dict(rep(name, 0, 0, 0, 1), error_occurred=True, error_message="execute failed: lost device")
        rows = benchruns.collapse([rep(name, 10, 1e9, 1e9, 0), bad])
        self.assertTrue(rows[name]["error_occurred"])

    def test_limits_of_a_plain_run_are_its_baselines_medians(self):
        run = benchruns.load_run(PLAIN)
        with open(PLAIN) as f:
            medians = {benchruns.short_name(b["run_name"]): b for b in json.load(f)["benchmarks"]
                       if b.get("aggregate_name") == "median"}
        self.assertEqual(run.limits.source, "baselines")
        self.assertEqual(run.limits.triad, medians[benchruns.TRIAD]["bytes_per_second"])
        self.assertEqual(run.limits.fma, medians[benchruns.FMA]["flops"])
        self.assertEqual(run.limits.sgemm, medians[benchruns.SGEMM]["flops"])
        self.assertEqual(run.limits.clblast, medians[benchruns.CLBLAST_SGEMM]["flops"])

    def test_a_record_brings_its_own_limits(self):
        with open(RECORD) as f:
            data = json.load(f)
        data["touchstone"]["limits"]["stream_triad_bytes_per_second"] = 1e12  # not what its baselines say
        run = benchruns.parse_run(data, "record")
        self.assertEqual((run.limits.source, run.limits.triad), ("record", 1e12))
        self.assertEqual(run.devices, data["touchstone"]["devices"])

    def test_classification_against_the_balance(self):
        lim = benchruns.Limits(triad=10e9, fma=100e9, sgemm=50e9)  # balance 10 FLOP/byte
        mem = benchruns.classify({"bytes_per_second": 5e9, "flops": 10e9}, lim)  # intensity 2
        self.assertEqual((mem.bound, mem.normalised, mem.of_sgemm, mem.roof_name), ("stream", 0.5, None, "triad"))
        comp = benchruns.classify({"bytes_per_second": 1e9, "flops": 40e9}, lim)  # intensity 40
        self.assertEqual((comp.bound, comp.normalised, comp.of_triad, comp.of_peak), ("compute", 0.8, None, 0.4))
        unknown = benchruns.classify({"bytes_per_second": 1e9, "flops": 1e9}, benchruns.Limits(triad=1e9))
        self.assertEqual((unknown.bound, unknown.normalised), ("?", None))

    def test_read_dominated_against_the_read_stream(self):
        lim = benchruns.Limits(triad=10e9, read=8e9, fma=100e9, sgemm=50e9)
        row = {"bytes_per_second": 6e9, "flops": 12e9, "write_share": 0.001}  # a decode GEMV
        f = benchruns.classify(row, lim)
        self.assertEqual((f.bound, f.roof_name), ("read", "read"))
        self.assertAlmostEqual(f.normalised, 0.75)
        self.assertAlmostEqual(f.of_triad, 0.6)  # still there, for reference
        # Writing half of what it reads: streaming, on the triad.
        f = benchruns.classify(dict(row, write_share=0.5), lim)
        self.assertEqual((f.bound, f.roof_name), ("stream", "triad"))
        self.assertAlmostEqual(f.normalised, 0.6)
        # A run without a read stream judges it by the triad, and names the triad.
        f = benchruns.classify(row, benchruns.Limits(triad=10e9, fma=100e9, sgemm=50e9))
        self.assertEqual((f.bound, f.roof_name), ("read", "triad"))
        self.assertAlmostEqual(f.normalised, 0.6)
        # On a device: its read stream, named so.
        dev = benchruns.Limits(devices={"vulkan": benchruns.DeviceRoofs(read=4e12, copy=3.6e12, fma_f32=40e12)})
        f = benchruns.classify({"bytes_per_second": 1e12, "flops": 2e12, "write_share": 0.0003}, dev.for_backend("vulkan"))
        self.assertEqual((f.bound, f.roof_name), ("read", "dev read"))
        self.assertAlmostEqual(f.normalised, 0.25)

    def test_labels_name_commit_and_machine(self):
        runs = benchruns.label_runs([benchruns.load_run(PLAIN), benchruns.load_run(RECORD), benchruns.load_run(RECORD)])
        self.assertEqual(runs[0].label, "vm 2596 MHz, 2026-11-22 12:12")
        self.assertEqual(runs[1].label, "8cb40c0a on vm 2445 MHz (#2)")
        self.assertEqual(runs[2].label, "8cb40c0a on vm 2445 MHz (#3)")


class Page(unittest.TestCase):
    """The CLI end to end on the two checked-in runs (two machines: one plain run, one record)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="touchstone-report-test.")
        cls.out = os.path.join(cls.tmp.name, "page")
        cls.proc = run_cli("report", PLAIN, RECORD, "-o", cls.out)
        with open(os.path.join(cls.out, "index.html"), encoding="utf-8") as f:
            cls.html = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_picture_is_a_png_beside_the_page(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        srcs = re.findall(r'<img src="([^"]+)"', self.html)
        pictures = sorted(f for f in os.listdir(self.out) if f.endswith(".png"))
        self.assertEqual(sorted(srcs), pictures)
        for src in srcs:
            self.assertNotIn("/", src)  # beside index.html: the folder moves as one
            w, h = png_size(os.path.join(self.out, src))
            self.assertGreater(min(w, h), 200, src)

    def test_rooflines_and_fractions_per_run_and_backend_and_comparisons(self):
        files = set(os.listdir(self.out))
        for backend in ("cpu", "opencl", "vulkan"):
            for i in (1, 2):
                self.assertIn(f"roofline-run{i}-{backend}.png", files)
                self.assertIn(f"fractions-run{i}-{backend}.png", files)
            self.assertIn(f"compare-{backend}.png", files)
        for label in ("vm 2596 MHz, 2026-11-22 12:12", "8cb40c0a on vm 2445 MHz"):
            self.assertIn(label, self.html)
        self.assertIn("Runs side by side", self.html)
        # zero-flop ops cannot sit on a log-log roofline: the page says which were left out
        self.assertRegex(self.html, r"Not on the roofline[^<]*copy_slice/cpu/len8388608/F32")

    def test_support_matrix_is_touchstone_list(self):
        listed = json.loads(run_cli("list", "--json").stdout)
        self.assertIn("Op support by backend", self.html)
        for row in listed["rows"]:
            self.assertIn(f"<td>{row['variant']}</td>", self.html.replace("&quot;", '"'))
        for b in listed["backends"]:
            self.assertIn(f"<th>{b['name']}</th>", self.html)

    def test_one_run_has_no_comparison(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "one")
            proc = run_cli("report", RECORD, "-o", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            files = os.listdir(out)
            self.assertFalse([f for f in files if f.startswith("compare-")])
            self.assertIn("roofline-run1-cpu.png", files)


class BadInput(unittest.TestCase):
    """Each: exit 1, one line on stderr naming the problem, no output folder."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="touchstone-report-bad.")
        self.out = os.path.join(self.tmp.name, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def file(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def refused(self, needle, *args, env=None):
        proc = run_cli("report", *args, env=env)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        self.assertTrue(proc.stderr.startswith("touchstone: "), proc.stderr)
        self.assertIn(needle, proc.stderr)
        self.assertFalse(os.path.exists(self.out), "an output folder was written")

    def test_missing_file(self):
        self.refused("no such file", os.path.join(self.tmp.name, "nope.json"), "-o", self.out)

    def test_empty_file(self):
        self.refused("empty file", self.file("empty.json", ""), "-o", self.out)

    def test_not_json(self):
        self.refused("not JSON", self.file("x.json", "gemm/cpu 1.2 ms\n"), "-o", self.out)

    def test_json_that_is_no_run(self):
        self.refused("not a benchmark run", self.file("x.json", '{"a": 1}'), "-o", self.out)

    def test_a_run_without_benchmarks(self):
        self.refused("holds no benchmarks", self.file("x.json", '{"context": {}, "benchmarks": []}'), "-o", self.out)

    def test_another_programs_benchmarks(self):
        other = {"context": {}, "benchmarks": [{"name": "BM_memcpy/8", "run_type": "iteration", "real_time": 1.0}]}
        self.refused("no touchstone-bench benchmark", self.file("x.json", json.dumps(other)), "-o", self.out)

    def test_a_record_of_another_format(self):
        with open(RECORD) as f:
            data = json.load(f)
        data["touchstone"]["format"] = 2
        self.refused("record format 2 is not 1", self.file("x.json", json.dumps(data)), "-o", self.out)

    def test_a_malformed_benchmark_row(self):
        with open(RECORD) as f:
            data = json.load(f)
        data["benchmarks"][3]["time_unit"] = "fortnights"
        self.refused("benchmark 3 is malformed (unknown time_unit", self.file("x.json", json.dumps(data)), "-o", self.out)

    def test_a_record_key_that_is_no_object(self):
        self.refused("\"touchstone\" key is not an object",
                     self.file("x.json", json.dumps({"benchmarks": [{"name": "baseline/fma_peak", "real_time": 1}],
                                                     "touchstone": "yes"})), "-o", self.out)

    def test_one_bad_run_among_good_ones_writes_nothing(self):
        self.refused("not JSON", PLAIN, self.file("x.json", "{"), "-o", self.out)

    def test_no_output_folder(self):
        self.refused("no output folder (-o DIR)", PLAIN)

    def test_no_run(self):
        self.refused("no run given", "-o", self.out)

    def test_output_is_a_file(self):
        path = self.file("taken", "keep me")
        self.refused("exists and is not a folder", PLAIN, "-o", path)
        with open(path) as f:
            self.assertEqual(f.read(), "keep me")

    def test_no_python_with_matplotlib(self):
        self.refused("python3-matplotlib", PLAIN, "-o", self.out, env={"TOUCHSTONE_PYTHON": "/nonexistent/python3"})
        self.refused("/bin/false cannot import matplotlib", PLAIN, "-o", self.out, env={"TOUCHSTONE_PYTHON": "/bin/false"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
