#pragma once
// The iteration cap of op benchmarks timed from cold caches. Google Benchmark picks the iteration count
// from the timed (manual) time alone until it adds up to --benchmark_min_time; the cache flush before
// each iteration is not in it. A microsecond op then gets ~10^5 iterations and as many flushes of
// milliseconds each: minutes for one benchmark.
#include "bench/op_benches.h"
#include "bench/options.h"

namespace ts::bench {

// Google Benchmark's own reading of --benchmark_filter (1.7): empty or "all" select everything, a
// leading '-' negates, otherwise an extended regex searched anywhere in the name.
bool filter_selects(const std::string& name);

class IterationCap {
 public:
  explicit IterationCap(const Options& o);
  // Whether `ob` runs a fixed --cold-iterations count instead of Google Benchmark's. Decided before the
  // run, for the benchmarks the filter selects, by timing one cold execute: an op that would need more
  // than the cap to fill the minimum time gets the cap. Only ops that move fewer bytes than the flush
  // reads are timed: a larger op takes at least about as long as the flush, which then at most doubles
  // Google Benchmark's budget. Timing means setting up, so a timed op is set up twice (here and when
  // it runs); the ops timed are the small ones.
  bool applies(const OpBench& ob) const;

 private:
  const Options& o_;
  bool off_;
};

}  // namespace ts::bench
