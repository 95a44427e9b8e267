#pragma once
// Finding and running touchstone-bench for `touchstone bench`.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts::cli {

// --bench PATH, else $TOUCHSTONE_BENCH, else beside this CLI: build/bench/touchstone-bench from
// build/cli/touchstone, bin/touchstone-bench from bin/touchstone (an install tree).
std::string find_bench_binary(const std::optional<std::string>& flag);

// Runs `binary args...` with its JSON written to a temporary --benchmark_out file and its console
// table on our stderr (progress for the user; our stdout stays the command's own output). Error when
// it cannot start, exits non-zero or writes no JSON.
nlohmann::json run_bench(const std::string& binary, const std::vector<std::string>& args);

// The names of the benchmarks `filter` selects (touchstone-bench --benchmark_list_tests: nothing runs).
std::vector<std::string> list_benchmarks(const std::string& binary, const std::string& filter);

// The backends other than the host's (cpu, reference) among the op benchmarks `names`: those whose
// device roofs a run of them measures too.
std::vector<std::string> device_backends_of(const std::vector<std::string>& names);

// touchstone-bench's own flags and Google Benchmark's, which `touchstone bench` passes through.
bool is_bench_flag(const std::string& arg);

// Regex-escapes a benchmark name for --benchmark_filter.
std::string regex_escape(const std::string& s);

}  // namespace ts::cli
