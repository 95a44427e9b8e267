// touchstone bench record | compare on synthetic Google Benchmark output: the record's added key, the
// verdicts and exit codes of compare, and the bad inputs (one line on stderr, exit 1). touchstone-bench
// itself is stood in for by a script that copies a prepared JSON to --benchmark_out, so no test here
// times anything.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/run_cli.h"
#include "tests/temp_path.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::run_cli;

fs::path temp(const std::string& name) {
  return ts::test::temp_path("bench_cli_" + name);
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
}

// One repetition of a benchmark as Google Benchmark writes it (manual time, microseconds).
json repetition(const std::string& name, int index, double seconds, double bytes_per_second, double flops) {
  return {{"name", name + "/manual_time"}, {"run_name", name + "/manual_time"}, {"run_type", "iteration"},
          {"repetitions", 10},           {"repetition_index", index},         {"iterations", 10},
          {"real_time", seconds * 1e6},  {"cpu_time", seconds * 1e6},         {"time_unit", "us"},
          {"bytes_per_second", bytes_per_second}, {"flops", flops}};
}

// A run of touchstone-bench: the three baselines at the given triad (GB/s) and sgemm (GFLOP/s), and op
// benchmarks at the given GB/s (memory-bound: 0.25 FLOP per byte), 10 repetitions each with a small
// deterministic spread.
json bench_json(double triad_gbs, double sgemm_gflops, const std::vector<std::pair<std::string, double>>& ops) {
  json runs = json::array();
  for (int i = 0; i < 10; ++i) {
    const double wiggle = 1 + 0.01 * ((i * 7) % 5 - 2);
    runs.push_back(repetition("baseline/stream_triad", i, 0.1, triad_gbs * 1e9 * wiggle, 0));
    runs.push_back(repetition("baseline/fma_peak", i, 0.1, 0, 60e9 * wiggle));
    runs.push_back(repetition("baseline/cblas_sgemm/m512_n4096_k4096", i, 0.1, 1e8, sgemm_gflops * 1e9 * wiggle));
    for (const auto& [name, gbs] : ops)  // 5 MB moved: the time follows the bandwidth
      runs.push_back(repetition(name, i, 5e-3 / (gbs * wiggle), gbs * 1e9 * wiggle, gbs * 0.25e9 * wiggle));
  }
  runs.push_back({{"name", "baseline/stream_triad/manual_time_cv"}, {"run_type", "aggregate"},
                  {"aggregate_name", "cv"}, {"real_time", 1.0}, {"time_unit", "us"}, {"flops", "NAN_HERE"}});
  return {{"context", {{"host_name", "test"}, {"touchstone_seed", "1"}, {"touchstone_device_cpu", "host CPU, SIMD AVX2"},
                       {"touchstone_device_opencl", "unavailable: no platform"}}},
          {"benchmarks", runs}};
}

// A stand-in touchstone-bench: copies `output` to the --benchmark_out file it is given, and writes its
// arguments, one a line, to temp("fake-args").
fs::path fake_bench(const json& output) {
  const fs::path out = temp("fake.json"), script = temp("fake-bench.sh");
  // Google Benchmark writes the cv of an all-zero counter as a bare NaN.
  std::string text = output.dump();
  if (const size_t at = text.find("\"NAN_HERE\""); at != std::string::npos) text.replace(at, 10, "NaN");
  write(out, text);
  write(script, "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + temp("fake-args").string() +
                    "'\nfor a; do case \"$a\" in --benchmark_out=*) cp '" + out.string() +
                    "' \"${a#--benchmark_out=}\";; esac; done\n");
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

// A record of the stand-in's output; one process unless `flags` say otherwise.
fs::path record_of(const json& output, const std::string& name, const std::string& flags = "--processes 1") {
  const fs::path rec = temp(name);
  fs::remove(rec);
  const test::CliResult r =
      run_cli("bench record --bench " + fake_bench(output).string() + " --out " + rec.string() + " " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return rec;
}

// One error line on stderr (after the "touchstone bench: ... running ..." line, when the run started).
void expect_one_line_error(const std::string& args, const std::string& needle) {
  const test::CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 1) << args;
  std::string err = r.err;
  if (err.rfind("touchstone bench: ", 0) == 0) err = err.substr(err.find('\n') + 1);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << args << ": " << r.err;
  EXPECT_EQ(err.rfind("touchstone: ", 0), 0u) << args << ": " << r.err;
  EXPECT_NE(err.find(needle), std::string::npos) << args << ": " << r.err;
}

const std::string kOp = "rms_norm/cpu/t2048_d4096/F32";

TEST(BenchCli, RecordKeepsTheJsonAndAddsLimits) {
  const json bench = bench_json(10, 80, {{kOp, 5}});
  std::ifstream in(record_of(bench, "rec.json"));
  const json rec = json::parse(in);
  json want = bench["benchmarks"];
  want.back()["flops"] = nullptr;  // the bare NaN, which JSON has not
  EXPECT_EQ(rec["benchmarks"], want);  // otherwise Google Benchmark's own JSON, unchanged
  EXPECT_EQ(rec["context"], bench["context"]);
  const json& t = rec["touchstone"];
  EXPECT_EQ(t["format"], 1);
  EXPECT_EQ(t["commit"].get<std::string>().size(), 40u);  // this test runs in the git tree
  EXPECT_TRUE(t["dirty"].is_boolean());
  EXPECT_NEAR(t["limits"]["stream_triad_bytes_per_second"].get<double>(), 10e9, 1);  // the median wiggle is 1
  EXPECT_NEAR(t["limits"]["fma_peak_flops"].get<double>(), 60e9, 1);
  EXPECT_NEAR(t["limits"]["sgemm_flops"]["m512_n4096_k4096"].get<double>(), 80e9, 1);
  ASSERT_EQ(t["devices"].size(), 2u);
  EXPECT_EQ(t["devices"][0]["backend"], "cpu");
  EXPECT_EQ(t["devices"][0]["device"], "host CPU, SIMD AVX2");
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Repetitions spread over processes come back as one run: every process's repetitions, renumbered, the
// per-process aggregates dropped, the process count in the record. (The stand-in writes its 10
// repetitions whatever it is asked for; what it was asked is in its arguments.)
TEST(BenchCli, RecordSpreadsRepetitionsOverProcesses) {
  const json bench = bench_json(10, 80, {{kOp, 5}});
  std::ifstream in(record_of(bench, "procs.json", "--repetitions 7 --processes 3"));
  const json rec = json::parse(in);
  EXPECT_EQ(rec["touchstone"]["processes"], 3);
  EXPECT_NE(slurp(temp("fake-args")).find("--benchmark_repetitions=2\n"), std::string::npos);  // 3 + 2 + 2
  std::map<std::string, std::vector<int>> index;
  for (const json& r : rec["benchmarks"]) {
    EXPECT_EQ(r["run_type"], "iteration");
    EXPECT_EQ(r["repetitions"], 30);
    index[r["run_name"]].push_back(r["repetition_index"]);
  }
  ASSERT_EQ(index.size(), 4u);
  for (const auto& [name, idx] : index) {
    ASSERT_EQ(idx.size(), 30u) << name;
    for (int i = 0; i < 30; ++i) EXPECT_EQ(idx[static_cast<size_t>(i)], i) << name;
  }
  // More processes than repetitions: one repetition each.
  std::ifstream in2(record_of(bench, "procs2.json", "--repetitions 2 --processes 9"));
  EXPECT_EQ(json::parse(in2)["touchstone"]["processes"], 2);
}

// The machine ran 30% slower everywhere (triad and the kernel alike): not a regression of the kernel.
TEST(BenchCli, SlowerMachineIsNotARegression) {
  const fs::path old_rec = record_of(bench_json(10, 80, {{kOp, 5}}), "old.json");
  const fs::path new_rec = record_of(bench_json(7, 56, {{kOp, 3.5}}), "new.json");
  const test::CliResult r = run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("-30.0%"), std::string::npos) << r.out;  // the raw change, shown
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
}

// The triad measured 30% faster while the kernel's time stayed: the normalised figure fell 23%, the raw
// one did not move. The roof's measurement moved, not the kernel: listed as unconfirmed, not failing.
TEST(BenchCli, LimitMovingAloneIsUnconfirmed) {
  const fs::path old_rec = record_of(bench_json(10, 80, {{kOp, 5}}), "old.json");
  const fs::path new_rec = record_of(bench_json(13, 80, {{kOp, 5}}), "new.json");
  const test::CliResult r = run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("unconfirmed (normalised only)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 regressions"), std::string::npos) << r.out;
}

TEST(BenchCli, RegressionFailsImprovementDoesNot) {
  const fs::path old_rec = record_of(bench_json(10, 80, {{kOp, 5}}), "old.json");
  const fs::path new_rec = record_of(bench_json(10, 80, {{kOp, 4}}), "new.json");  // 20% of triad lost
  const test::CliResult r = run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 regressions"), std::string::npos) << r.out;
  const test::CliResult ro =
      run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string() + " --report-only");
  EXPECT_EQ(ro.exit_code, 0) << ro.out;
  EXPECT_NE(ro.out.find("REGRESSION"), std::string::npos) << ro.out;
  const test::CliResult back = run_cli("bench compare " + new_rec.string() + " --against " + old_rec.string());
  EXPECT_EQ(back.exit_code, 0) << back.out;
  EXPECT_NE(back.out.find("IMPROVED"), std::string::npos) << back.out;
  // A 20% floor: the same 20% drop is then under it (significant, listed, not failing).
  const test::CliResult floor =
      run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string() + " --min-effect 0.25");
  EXPECT_EQ(floor.exit_code, 0) << floor.out;
  EXPECT_NE(floor.out.find("small change"), std::string::npos) << floor.out;
}

// A run with a device backend's own roofs (bench/device_roofs.cpp) at `copy_gbs` (read: 1.25x that) and
// 1 TFLOP/s of F32 FMA.
json with_device_roofs(json bench, const std::string& backend, double copy_gbs) {
  for (int i = 0; i < 10; ++i) {
    const double wiggle = 1 + 0.01 * ((i * 3) % 5 - 2);
    bench["benchmarks"].push_back(repetition("baseline/device_copy/" + backend, i, 0.01, copy_gbs * 1e9 * wiggle, 0));
    bench["benchmarks"].push_back(
        repetition("baseline/device_read/" + backend, i, 0.01, 1.25 * copy_gbs * 1e9 * wiggle, 0));
    bench["benchmarks"].push_back(repetition("baseline/device_fma_f32/" + backend, i, 0.01, 0, 1e12 * wiggle));
  }
  return bench;
}

const std::string kDeviceOp = "gemm_quant/vulkan/Q4_K_m1_n4096_k14336/F32";

// The device roofs go into the record, and a device backend's benchmarks are judged against them: the
// device ran 30% slower (its copy stream and the kernel alike) on an unchanged host, which is no
// regression of the kernel (against the host's triad it would read as one).
TEST(BenchCli, DeviceBenchmarksAreJudgedAgainstTheirDevicesRoofs) {
  const fs::path old_rec = record_of(with_device_roofs(bench_json(10, 80, {{kDeviceOp, 500}}), "vulkan", 1000), "dold.json");
  const fs::path new_rec = record_of(with_device_roofs(bench_json(10, 80, {{kDeviceOp, 350}}), "vulkan", 700), "dnew.json");
  std::ifstream in(old_rec);
  const json roofs = json::parse(in)["touchstone"]["limits"]["device_roofs"];
  EXPECT_NEAR(roofs["vulkan"]["copy"].get<double>(), 1000e9, 1e3);
  EXPECT_NEAR(roofs["vulkan"]["read"].get<double>(), 1250e9, 1e3);
  EXPECT_NEAR(roofs["vulkan"]["fma_f32"].get<double>(), 1e12, 1e3);
  EXPECT_FALSE(roofs["vulkan"].contains("fma_f16"));  // not measured: not recorded
  const test::CliResult r = run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("mem dev"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vulkan device copy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-30.0%"), std::string::npos) << r.out;  // the raw change, shown
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  // Without the device's roofs in one of the records, the host's triad judges it: a regression.
  const fs::path host_only = record_of(bench_json(10, 80, {{kDeviceOp, 350}}), "dhost.json");
  const test::CliResult h = run_cli("bench compare " + old_rec.string() + " --against " + host_only.string());
  EXPECT_EQ(h.exit_code, 1) << h.out << h.err;
  EXPECT_NE(h.out.find("REGRESSION"), std::string::npos) << h.out;
  // A device roof that is not a positive number is bad input.
  std::ifstream in2(old_rec);
  json bad = json::parse(in2);
  bad["touchstone"]["limits"]["device_roofs"]["vulkan"]["copy"] = -1;
  const fs::path bad_rec = temp("dbad.json");
  write(bad_rec, bad.dump());
  expect_one_line_error("bench compare " + bad_rec.string() + " --against " + new_rec.string(),
                        "device_roofs.vulkan.copy is not a positive number");
}

// A run with the read-only stream at `read_gbs`, and `op`'s repetitions carrying the write_share
// counter touchstone-bench writes (bytes written over bytes read).
json with_read_stream(json bench, double read_gbs, const std::string& op, double write_share) {
  for (int i = 0; i < 10; ++i) {
    const double wiggle = 1 + 0.01 * ((i * 3) % 5 - 2);
    bench["benchmarks"].push_back(repetition("baseline/stream_read", i, 0.01, read_gbs * 1e9 * wiggle, 0));
  }
  for (json& r : bench["benchmarks"])
    if (r["name"] == op + "/manual_time") r["write_share"] = write_share;
  return bench;
}

const std::string kDecodeOp = "gemm_quant/cpu/Q4_K_m1_n4096_k14336/F32";

// A read-dominated benchmark (a decode GEMV writes a row for the matrix it reads) is judged against the
// read-only stream: the stream and the kernel both ran 30% slower while the triad held, which is no
// regression of the kernel (against the triad it would be one); a streaming op stays on the triad.
TEST(BenchCli, ReadDominatedBenchmarksAreJudgedAgainstTheReadStream) {
  const fs::path old_rec = record_of(with_read_stream(bench_json(10, 80, {{kDecodeOp, 5}}), 9, kDecodeOp, 0.001), "rold.json");
  const fs::path new_rec = record_of(with_read_stream(bench_json(10, 80, {{kDecodeOp, 3.5}}), 6.3, kDecodeOp, 0.001), "rnew.json");
  std::ifstream in(old_rec);
  EXPECT_NEAR(json::parse(in)["touchstone"]["limits"]["stream_read_bytes_per_second"].get<double>(), 9e9, 1e3);
  const test::CliResult r = run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" read "), std::string::npos) << r.out;  // the bound column
  EXPECT_NE(r.out.find("stream read"), std::string::npos) << r.out;  // the limits table
  EXPECT_EQ(r.out.find("REGRESSION"), std::string::npos) << r.out;
  // The same kernel writing half of what it reads is streaming: judged on the triad, a regression.
  const fs::path s_old = record_of(with_read_stream(bench_json(10, 80, {{kDecodeOp, 5}}), 9, kDecodeOp, 0.5), "sold.json");
  const fs::path s_new = record_of(with_read_stream(bench_json(10, 80, {{kDecodeOp, 3.5}}), 6.3, kDecodeOp, 0.5), "snew.json");
  const test::CliResult st = run_cli("bench compare " + s_old.string() + " --against " + s_new.string());
  EXPECT_EQ(st.exit_code, 1) << st.out << st.err;
  EXPECT_NE(st.out.find("REGRESSION"), std::string::npos) << st.out;
}

TEST(BenchCli, BenchmarksMissingFromOneSideAreListed) {
  const fs::path old_rec = record_of(bench_json(10, 80, {{kOp, 5}, {"gelu/cpu/t2048_ff4096/F32", 4}}), "old.json");
  const fs::path new_rec = record_of(bench_json(10, 80, {{kOp, 5}, {"silu/cpu/t2048_ff4096/F32", 4}}), "new.json");
  const test::CliResult r = run_cli("bench compare " + old_rec.string() + " --against " + new_rec.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("gelu/cpu/t2048_ff4096/F32: only in the baseline"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("silu/cpu/t2048_ff4096/F32: only in the new run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 not in both runs"), std::string::npos) << r.out;
}

// Without --against, compare reruns exactly the baseline's benchmarks with its seed, repetitions and
// measurement flags (flags given on the command line come after them and win).
TEST(BenchCli, CompareRerunsTheBaselinesBenchmarks) {
  json bench = bench_json(10, 80, {{kOp, 5}});
  bench["context"]["touchstone_seed"] = "42";
  bench["context"]["touchstone_flags"] = "--benchmark_filter=^rms --benchmark_min_time=0.2 --cold-iterations=7";
  const fs::path base = record_of(bench, "base.json");
  const test::CliResult r =
      run_cli("bench compare " + base.string() + " --bench " + fake_bench(bench).string() + " --benchmark_min_time=0.3");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 regressions"), std::string::npos) << r.out;
  const std::string args = slurp(temp("fake-args"));
  for (const char* want : {"--seed=42\n", "--dtypes=all\n", "--benchmark_repetitions=10\n",
                           "--benchmark_report_aggregates_only=false\n", "--cold-iterations=7\n",
                           "--benchmark_min_time=0.2\n--cold-iterations=7\n--dtypes=all\n--seed=42\n--benchmark_min_time=0.3\n",
                           "rms_norm/cpu/t2048_d4096/F32", "baseline/stream_triad"})
    EXPECT_NE(args.find(want), std::string::npos) << want << " in\n" << args;
  EXPECT_EQ(args.find("^rms"), std::string::npos) << args;  // the baseline's filter is not reused
}

TEST(BenchCli, BadInput) {
  const fs::path good = record_of(bench_json(10, 80, {{kOp, 5}}), "good.json");
  const fs::path not_json = temp("not.json"), not_record = temp("plain.json"), no_limits = temp("nolimits.json");
  write(not_json, "{ this is not json");
  write(not_record, bench_json(10, 80, {{kOp, 5}}).dump());
  std::ifstream in(good);
  json rec = json::parse(in);
  rec["touchstone"].erase("limits");
  write(no_limits, rec.dump());
  expect_one_line_error("bench compare " + temp("missing.json").string(), "cannot open");
  expect_one_line_error("bench compare " + not_json.string(), "not JSON");
  expect_one_line_error("bench compare " + not_record.string(), "not a touchstone record");
  expect_one_line_error("bench compare " + no_limits.string(), "no limits");
  expect_one_line_error("bench compare " + good.string() + " --against " + not_json.string(), "not JSON");
  expect_one_line_error("bench compare " + good.string() + " --against " + good.string() + " --min-effect x", "--min-effect");
  expect_one_line_error("bench compare", "usage");
  expect_one_line_error("bench frobnicate", "unknown bench command");
  expect_one_line_error("bench record --repetitions 0", "--repetitions");
  expect_one_line_error("bench record --processes x", "--processes");
  expect_one_line_error("bench compare " + good.string() + " --against " + good.string() + " --processes 2", "--processes");
  rec = json::parse(std::ifstream(good));
  rec["touchstone"]["processes"] = "many";
  write(no_limits, rec.dump());
  expect_one_line_error("bench compare " + no_limits.string(), "\"processes\" is \"many\"");
  expect_one_line_error("bench record --bench /nonexistent/touchstone-bench", "not an executable");
  expect_one_line_error("bench record --bench /bin/false", "failed");
  // A run without its baselines has no limits to record.
  expect_one_line_error("bench record --bench " + fake_bench({{"context", json::object()}, {"benchmarks", json::array()}}).string(),
                        "no limits");
}

}  // namespace
}  // namespace ts
