#pragma once
// touchstone-bench's own flags, read (and removed from argv) before Google Benchmark sees the rest.
#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace ts::bench {

struct Options {
  bool include_reference = false;        // the scalar reference is ground truth, not a contender
  std::vector<DType> dtypes = {DType::F32};
  uint64_t seed = 1;
  bool warm_cache = false;  // --warm-cache: skip the cache flush before each timed iteration
};

// Takes --include-reference, --dtypes=F32,F16|all, --seed=N and --warm-cache out of argv; Error for a bad value.
Options take_options(int& argc, char** argv);
void print_help();  // ours, then Google Benchmark's

}  // namespace ts::bench
