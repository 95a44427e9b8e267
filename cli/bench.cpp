// touchstone bench record | compare: baseline records of touchstone-bench runs and their comparison
// (cli/bench_record.h, cli/bench_compare.h). Flags the CLI does not know that are touchstone-bench's or
// Google Benchmark's (--benchmark_*, --dtypes=, --seed=, ...) are passed to touchstone-bench.
#include <fstream>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/bench_commit.h"
#include "cli/bench_compare.h"
#include "cli/bench_record.h"
#include "cli/bench_run.h"
#include "cli/commands.h"
#include "core/error.h"

namespace ts::cli {

namespace {

using nlohmann::json;

// Without a filter: every op on the cpu backend (as ci/bench-summary.py; PoCL and lavapipe are CPU
// emulations where one model-sized iteration can take seconds).
constexpr const char* kDefaultFilter = "^[a-z_]+/cpu/";
constexpr int kDefaultRepetitions = 10;
constexpr int kDefaultProcesses = 5;  // two repetitions a process

struct Split {
  std::vector<std::string> ours, bench;
};

Split split_flags(const std::vector<std::string>& argv) {
  Split s;
  for (const auto& a : argv) (is_bench_flag(a) ? s.bench : s.ours).push_back(a);
  return s;
}

std::optional<std::string> take_flag(std::vector<std::string>& flags, const std::string& prefix) {
  for (auto it = flags.begin(); it != flags.end(); ++it)
    if (it->rfind(prefix, 0) == 0) {
      std::string v = it->substr(prefix.size());
      flags.erase(it);
      return v;
    }
  return std::nullopt;
}

int positive_int(const std::string& flag, const std::string& v) {
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(v, &used);
  } catch (const std::exception&) {
  }
  check(used == v.size() && n > 0, "--{}: '{}' is not a positive integer", flag, v);
  return n;
}

double fraction(const std::string& flag, const std::string& v, double lo, double hi) {
  size_t used = 0;
  double x = -1;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
  }
  check(used == v.size() && x > lo && x < hi, "--{}: '{}' is not a number in ({}, {})", flag, v, lo, hi);
  return x;
}

// Runs touchstone-bench with `filter` (the baselines added), every repetition kept in the JSON, and
// wraps its output as a record. The repetitions are spread over `processes` runs of touchstone-bench,
// one after the other: a process draws its own physical pages for the buffers (transparent huge pages or
// not, which cache sets they map to), its own code and heap alignment, and on this kind of machine that
// moves a kernel by 10-30% from one process to the next while repetitions inside one process agree.
// Repetitions of one process would hide that spread from the U test, which would then read two records
// of one commit as different (measured: 2 false regressions in 100 comparisons). Spread over processes,
// the spread is in the sample.
json record_run(const Args& a, std::vector<std::string> bench_flags, const std::string& filter, int repetitions,
                int processes) {
  const std::string binary = find_bench_binary(a.get("bench"));
  take_flag(bench_flags, "--benchmark_filter=");
  take_flag(bench_flags, "--benchmark_out=");  // ours: the JSON comes back through a file of our own
  take_flag(bench_flags, "--benchmark_out_format=");
  take_flag(bench_flags, "--benchmark_format=");
  processes = std::min(processes, repetitions);
  const CommitInfo c = current_commit(a.get("source"));
  std::cerr << fmt::format("touchstone bench: commit {}{} ({}); running {} with {} repetitions in {} process{}\n",
                           c.meta.commit, c.meta.dirty ? " (dirty)" : "", c.source, binary, repetitions, processes,
                           processes == 1 ? "" : "es");
  // Each device backend the filter selects is judged against its own device's roofs: measure them too.
  std::string baselines = kBaselineFilter;
  if (const std::string d = device_roof_filter(device_backends_of(list_benchmarks(binary, filter))); !d.empty())
    baselines += "|" + d;
  std::vector<json> runs;
  for (int p = 0; p < processes; ++p) {
    const int reps = repetitions / processes + (p < repetitions % processes ? 1 : 0);
    // Repetitions in random interleaved order: the load drifts over minutes, and one benchmark's
    // repetitions back to back would all see the same moment while the limits it is divided by were
    // measured at another. Interleaved, every benchmark (the limits included) samples the whole run.
    std::vector<std::string> args = {"--benchmark_filter=(" + filter + ")|" + baselines,
                                     fmt::format("--benchmark_repetitions={}", reps),
                                     "--benchmark_enable_random_interleaving=true",
                                     "--benchmark_report_aggregates_only=false",
                                     "--benchmark_display_aggregates_only=true"};
    args.insert(args.end(), bench_flags.begin(), bench_flags.end());
    runs.push_back(run_bench(binary, args));
  }
  json bench = merge_processes(std::move(runs));
  RecordMeta meta = c.meta;
  meta.processes = processes;
  // The benchmark binary says how it was built when it can (an older one may not).
  if (bench.contains("context") && bench["context"].contains("touchstone_build_type"))
    meta.build_type = bench["context"]["touchstone_build_type"].get<std::string>();
  return make_record(std::move(bench), meta);
}

void write_json(const json& j, const std::optional<std::string>& path) {
  if (!path) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  check_output_path(*path, "");
  std::ofstream out(*path);
  check(out.good(), "{}: cannot write", *path);
  out << j.dump(2) << "\n";
  check(out.good(), "{}: write failed", *path);
}

int cmd_record(const std::vector<std::string>& argv) {
  Split s = split_flags(argv);
  const Args a(s.ours, {"out", "bench", "source", "repetitions", "processes"}, {});
  check(a.positional().empty(), "bench record takes no positional argument ('{}')",
        a.positional().empty() ? "" : a.positional()[0]);
  const int reps = a.get("repetitions") ? positive_int("repetitions", *a.get("repetitions")) : kDefaultRepetitions;
  const std::string filter = take_flag(s.bench, "--benchmark_filter=").value_or(kDefaultFilter);
  if (auto out = a.get("out")) check_output_path(*out, "");  // before the long run, not after
  const int processes = a.get("processes") ? positive_int("processes", *a.get("processes")) : kDefaultProcesses;
  write_json(record_run(a, s.bench, filter, reps, processes), a.get("out"));
  return 0;
}

// The benchmarks of a record as one exact filter, and its repetition count.
std::string filter_of(const Record& r) {
  std::string alt;
  for (const auto& [name, reps] : r.runs) alt += (alt.empty() ? "" : "|") + regex_escape(name);
  check(!alt.empty(), "the baseline has no benchmarks");
  return "^(" + alt + ")(/iterations:[0-9]+)?(/manual_time)?$";
}

// The flags the baseline was measured with that decide how (minimum time, warm or cold caches, the
// iteration cap), from touchstone-bench's "touchstone_flags" context; which benchmarks run and how the
// output is written are compare's own. An older binary's record has none: its defaults then.
std::vector<std::string> measurement_flags_of(const Record& r) {
  std::vector<std::string> out;
  const json& ctx = r.json.value("context", json::object());
  std::string flags = ctx.value("touchstone_flags", std::string());
  for (size_t start = 0; start < flags.size();) {
    const size_t end = std::min(flags.find(' ', start), flags.size());
    const std::string f = flags.substr(start, end - start);
    start = end + 1;
    bool own = false;
    for (const char* p : {"--benchmark_filter", "--benchmark_out", "--benchmark_format", "--benchmark_repetitions",
                          "--benchmark_report_aggregates_only", "--benchmark_display_aggregates_only", "--dtypes",
                          "--seed", "--benchmark_list_tests"})
      own = own || f.rfind(p, 0) == 0;
    if (!own && is_bench_flag(f)) out.push_back(f);
  }
  return out;
}

int repetitions_of(const Record& r) {
  size_t most = 0;
  for (const auto& [name, reps] : r.runs) most = std::max(most, reps.seconds.size());
  return std::max<int>(static_cast<int>(most), 1);
}

int cmd_compare(const std::vector<std::string>& argv) {
  Split s = split_flags(argv);
  const Args a(s.ours, {"against", "bench", "source", "repetitions", "processes", "min-effect", "alpha", "save"},
               {"report-only"});
  check(a.positional().size() == 1, "usage: touchstone bench compare BASELINE [--against RUN] [--report-only] ...");
  bench_stats::Thresholds t;
  if (auto v = a.get("min-effect")) t.min_effect = fraction("min-effect", *v, 0, 10);
  if (auto v = a.get("alpha")) t.alpha = fraction("alpha", *v, 0, 1);
  const Record baseline = load_record(a.positional()[0]);
  Record run;
  if (auto against = a.get("against")) {
    check(s.bench.empty() && !a.get("repetitions") && !a.get("processes") && !a.get("save"),
          "--against reads a record: no benchmark flags, --repetitions, --processes or --save with it");
    run = load_record(*against);
  } else {
    const int reps = a.get("repetitions") ? positive_int("repetitions", *a.get("repetitions")) : repetitions_of(baseline);
    check(!take_flag(s.bench, "--benchmark_filter="), "bench compare runs the baseline's benchmarks: no --benchmark_filter");
    // The same inputs as the baseline (its seed), every dtype registered so the filter finds them all,
    // measured as the baseline was; flags given here come last and win.
    const json& ctx = baseline.json.value("context", json::object());
    std::vector<std::string> flags = measurement_flags_of(baseline);
    flags.push_back("--dtypes=all");
    flags.push_back("--seed=" + ctx.value("touchstone_seed", std::string("1")));
    s.bench.insert(s.bench.begin(), flags.begin(), flags.end());
    const int processes =
        a.get("processes") ? positive_int("processes", *a.get("processes")) : baseline.meta.processes;
    json j = record_run(a, s.bench, filter_of(baseline), reps, processes);
    if (auto save = a.get("save")) write_json(j, save);
    run = parse_record(std::move(j), "this run");
  }
  std::cout << fmt::format("baseline: {} ({}{}, {})\nthis run: {} ({}{}, {})\n\n", a.positional()[0],
                           baseline.meta.commit.substr(0, 12), baseline.meta.dirty ? ", dirty" : "",
                           baseline.meta.build_type, a.get("against").value_or("measured now"),
                           run.meta.commit.substr(0, 12), run.meta.dirty ? ", dirty" : "", run.meta.build_type);
  const CompareSummary sum = compare_records(baseline, run, t, std::cout);
  if (sum.regressed == 0) return 0;
  if (a.has("report-only")) {
    std::cout << "(--report-only: the regressions above do not fail this run)\n";
    return 0;
  }
  return 1;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  check(!argv.empty(), "usage: touchstone bench record|compare ... (touchstone --help)");
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv[0] == "record") return cmd_record(rest);
  if (argv[0] == "compare") return cmd_compare(rest);
  fail("unknown bench command '{}' (record or compare)", argv[0]);
}

}  // namespace ts::cli
