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
};

// Takes --include-reference, --dtypes=F32,F16|all and --seed=N out of argv; Error for a bad value.
Options take_options(int& argc, char** argv);
void print_help();  // ours, then Google Benchmark's

}  // namespace ts::bench
