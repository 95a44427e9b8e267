#pragma once
// The graph family's benchmarks: graph/<backend>/<program>_<preset>_l<layers>/{eager,replay}.
#include "bench/options.h"

namespace ts::bench {

void register_graph_benchmarks(const Options& o);

}  // namespace ts::bench
