#pragma once
// touchstone-bench's own flags, read (and removed from argv) before Google Benchmark sees the rest.
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace ts::bench {

struct Options {
  bool include_reference = false;        // the scalar reference is ground truth, not a contender
  std::vector<DType> dtypes = {DType::F32};
  uint64_t seed = 1;
  bool warm_cache = false;  // --warm-cache: skip the cache flush before each timed iteration
  // --cold-iterations=N: the iteration count of an op whose cost model moves less than the cache flush
  // reads (0: Google Benchmark's minimum time decides, as for every other benchmark). See op_benches.cpp.
  int64_t cold_iterations = 30;
  // --collective-rounds=N: the collective benchmarks registered N times, round by round (under mpiexec).
  int collective_rounds = 1;
  // --collective-sizes=full: the whole sweep (8 B, then every power of 4 from 16 B to 256 MiB) instead
  // of the short one (8 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB), so a default run stays short.
  bool collective_full = false;
  // Read (not removed) from Google Benchmark's flags, for the cap's decision.
  double min_time = 0.5;     // --benchmark_min_time (Google Benchmark 1.7's default)
  bool listing = false;      // --benchmark_list_tests: nothing runs, so nothing is probed
  // Read (not removed) too: the report formats, for the reporters that keep names still
  // (stable_names.h). Google Benchmark's defaults.
  std::string format = "console";      // --benchmark_format
  std::string out;                     // --benchmark_out
  std::string out_format = "json";     // --benchmark_out_format
  std::string color = "auto";          // --benchmark_color
  bool counters_tabular = false;       // --benchmark_counters_tabular
};

// Takes --include-reference, --dtypes=F32,F16|all, --seed=N, --warm-cache and --cold-iterations=N out of
// argv; Error for a bad value.
Options take_options(int& argc, char** argv);
void print_help();  // ours, then Google Benchmark's

}  // namespace ts::bench
