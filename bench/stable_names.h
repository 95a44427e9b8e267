#pragma once
// Names that hold still. Google Benchmark appends "/iterations:N" to the name of a benchmark given a
// fixed iteration count, and the iteration cap (iteration_cap.h) gives one only where this machine runs
// the op fast enough: the same benchmark would be named one way on a slow machine and another on a
// fast one, an anchored filter copied from --benchmark_list_tests would match nothing, and records of
// two machines would share no names. So the run is selected and reported under the name the list
// prints, whatever the cap decided.
#include <cstddef>
#include <string>
#include <vector>

#include "bench/options.h"

namespace ts::bench {

// The filter Google Benchmark is given when the benchmarks named `capped` (as listed, ".../manual_time")
// run a fixed iteration count: `filter` itself, or-ed with those names as Google Benchmark spells them
// (".../iterations:N/manual_time"); each was capped only because `filter` selected its listed name. A
// negative filter ('-' first) stays as it is: a suffixed name escapes it only if it names "iterations:".
std::string filter_with_capped(const std::string& filter, const std::vector<std::string>& capped);

// RunSpecifiedBenchmarks with reporters that drop "/iterations:N" from every name they print or write,
// in the formats Google Benchmark's own flags ask for (`o`); `capped` as above. Returns the number of
// benchmarks run.
size_t run_with_stable_names(const Options& o, const std::vector<std::string>& capped);

}  // namespace ts::bench
