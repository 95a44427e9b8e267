#include "bench/iteration_cap.h"

#include <regex>
#include <string>

#include <benchmark/benchmark.h>

#include "bench/cache_flush.h"
#include "core/backend.h"

namespace ts::bench {

bool filter_selects(const std::string& name) {
  std::string spec = benchmark::GetBenchmarkFilter();
  if (spec.empty() || spec == "all") return true;
  const bool negative = spec[0] == '-';
  if (negative) spec.erase(0, 1);
  try {
    return std::regex_search(name, std::regex(spec, std::regex::extended)) != negative;
  } catch (const std::regex_error&) {
    return false;  // Google Benchmark reports a bad filter itself
  }
}

IterationCap::IterationCap(const Options& o) : o_(o), off_(o.warm_cache || o.cold_iterations == 0 || o.listing) {}

bool IterationCap::applies(const OpBench& ob) const {
  if (off_ || !filter_selects(ob.name + "/manual_time")) return false;
  try {
    ob.op->check_params(ob.preset->params);
    if (ob.op->cost(ob.preset->params, ob.dtype).bytes >= static_cast<double>(flush_buffer_bytes())) return false;
    OpSetup& s = set_up(ob);
    before_timed_call(backend(ob.backend), /*warm_cache=*/false);
    s.launch->execute();
    return s.launch->last_seconds() * static_cast<double>(o_.cold_iterations) < o_.min_time;
  } catch (const std::exception&) {
    release_setup();
    return false;  // unsupported, unavailable or failing: the benchmark says so when it runs
  }
}

}  // namespace ts::bench
