#pragma once
// The op registry: one benchmark per backend x op x bench preset x selected dtype.
#include "bench/options.h"

namespace ts::bench {

// Registers <op>/<backend>/<preset>/<dtype> for every op in the catalog and every registered backend
// (the reference only with --include-reference). Backends are created only when a benchmark of
// theirs runs, so a filter that excludes a backend never initializes its device.
int register_op_benchmarks(const Options& o);  // how many were registered

}  // namespace ts::bench
