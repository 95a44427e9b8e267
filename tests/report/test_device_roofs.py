#!/usr/bin/env python3
"""Device roofs in the run readers (ctest -R device_roofs): a device backend's benchmarks are set
against its own device's read / copy / FMA roofs measured in the same run, named beside every
fraction, while cpu benchmarks keep the host's; runs without device roofs read as before; a record's
device roofs are checked like its other limits. Needs nothing but python3.
"""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
RUN = os.path.join(SOURCE, "tests", "data", "bench", "device-roofs.json")
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SOURCE, "report"))
import benchruns  # noqa: E402

VK = "gemm_quant/vulkan/Q4_K_m1_n4096_k14336/F32"
CL = "gemm_quant/opencl/Q4_K_m1_n4096_k14336/F32"
CPU = "gemm_quant/cpu/Q4_K_m1_n4096_k14336/F32"


class Limits(unittest.TestCase):
    def setUp(self):
        self.run = benchruns.load_run(RUN)

    def test_each_device_backend_has_its_roofs(self):
        d = self.run.limits.devices
        self.assertEqual(sorted(d), ["opencl", "vulkan"])
        self.assertEqual((d["vulkan"].read, d["vulkan"].copy, d["vulkan"].fma_f32, d["vulkan"].fma_f16),
                         (2000e9, 1600e9, 50000e9, 100000e9))
        self.assertEqual((d["opencl"].read, d["opencl"].copy, d["opencl"].fma_f16), (1000e9, None, None))  # f16 skipped

    def test_device_benchmark_against_its_device(self):
        f = benchruns.classify_named(VK, self.run.rows[VK], self.run.limits)
        self.assertEqual(f.bound, "stream")  # 0.5 FLOP/byte, device balance 31; no write_share in this run
        self.assertAlmostEqual(f.of_read, 0.5)
        self.assertAlmostEqual(f.of_triad, 1000 / 1600)  # of the device copy, in the triad's place
        self.assertAlmostEqual(f.of_peak, 500 / 50000)
        self.assertIsNone(f.of_sgemm)
        self.assertEqual((f.names["triad"], f.names["read"], f.names["fma"]), ("dev copy", "dev read", "dev fma"))

    def test_a_missing_device_roof_is_not_borrowed_from_the_host(self):
        f = benchruns.classify_named(CL, self.run.rows[CL], self.run.limits)
        self.assertAlmostEqual(f.of_read, 0.5)
        self.assertIsNone(f.of_triad)  # no device copy: no host triad in its place
        self.assertEqual(f.bound, "?")  # no device FMA peak: no balance

    def test_cpu_benchmark_keeps_the_host(self):
        f = benchruns.classify_named(CPU, self.run.rows[CPU], self.run.limits)
        self.assertAlmostEqual(f.of_triad, 20 / 30)
        self.assertAlmostEqual(f.of_read, 0.5)
        self.assertEqual(f.names["triad"], "triad")

    def test_a_run_without_device_roofs_judges_devices_by_the_host(self):
        with open(RUN) as fh:
            data = json.load(fh)
        data["benchmarks"] = [b for b in data["benchmarks"] if "/device_" not in b["name"]]
        run = benchruns.parse_run(data, "no-roofs")
        f = benchruns.classify_named(VK, run.rows[VK], run.limits)
        self.assertAlmostEqual(f.of_triad, 1000 / 30)
        self.assertEqual(f.names["triad"], "triad")

    def test_record_device_roofs_are_read_and_checked(self):
        with open(RUN) as fh:
            data = json.load(fh)
        data["touchstone"] = {"format": 1, "limits": {"stream_triad_bytes_per_second": 30e9, "fma_peak_flops": 200e9,
                                                      "sgemm_flops": {"m512_n4096_k4096": 100e9},
                                                      "device_roofs": {"vulkan": {"read": 3e12, "copy": 2e12}}}}
        run = benchruns.parse_run(data, "record")
        self.assertEqual((run.limits.devices["vulkan"].read, run.limits.devices["vulkan"].copy), (3e12, 2e12))
        self.assertNotIn("opencl", run.limits.devices)  # the record's roofs, not the rows'
        data["touchstone"]["limits"]["device_roofs"]["vulkan"]["copy"] = 0
        with self.assertRaisesRegex(benchruns.RunError, r"device_roofs\.vulkan\.copy is 0"):
            benchruns.parse_run(data, "record")
        data["touchstone"]["limits"]["device_roofs"]["vulkan"] = {"bogus": 1}
        with self.assertRaisesRegex(benchruns.RunError, "unknown roof"):
            benchruns.parse_run(data, "record")


class Summary(unittest.TestCase):
    """ci/bench-summary.py prints the device roofs and names the roof beside every fraction."""

    def test_table(self):
        p = subprocess.run([sys.executable, os.path.join(SOURCE, "ci", "bench-summary.py"), "--json", RUN],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = {line.split()[0]: line for line in p.stdout.splitlines() if line.strip()}
        self.assertIn("device roofs, vulkan: dev read 2000.0 GB/s, dev copy 1600.0 GB/s", p.stdout)
        self.assertRegex(lines[VK], r" 62\.5% dev copy +50\.0% dev read +1\.0% dev fma")
        self.assertRegex(lines[CL], r" 50\.0% dev read")
        self.assertNotIn("triad", lines[CL])
        self.assertRegex(lines[CPU], r" 66\.7% triad +50\.0% read +5\.0% fma")

    def test_device_roof_filter(self):
        self.assertEqual(benchruns.device_roof_filter(["vulkan", "opencl", "vulkan"]),
                         "^baseline/device_[a-z0-9_]+/(opencl|vulkan)(/|$)")
        self.assertIsNone(benchruns.device_roof_filter([]))


if __name__ == "__main__":
    unittest.main()
