#include "bench/op_benches.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/cache_flush.h"
#include "bench/iteration_cap.h"
#include "bench/setup_cache.h"
#include "core/backend.h"
#include "core/case_list.h"
#include "core/op.h"
#include "core/traffic.h"

namespace ts::bench {

namespace {

std::unique_ptr<OpSetup> make_setup(Backend& b, const Problem& pr, const OpBench& ob) {
  auto s = std::make_unique<OpSetup>();
  s->io = ob.op->make_case(pr, ob.seed);
  ob.op->validate(pr, s->io);
  const auto t0 = std::chrono::steady_clock::now();
  s->launch = b.prepare(pr, s->io);
  s->prepare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s->launch->execute();  // warm-up: first-use compilation, page faults, caches
  return s;
}

}  // namespace

OpSetup& set_up(const OpBench& ob) {
  Backend& b = backend(ob.backend);
  const Availability a = b.availability();
  if (!a.ok) throw SetupSkip("backend unavailable: " + a.detail);
  ob.op->check_params(ob.preset->params);
  const Problem pr = make_problem(*ob.op, ob.preset->params, ob.dtype);
  const Support sup = b.supports(pr);
  if (!sup.ok) throw SetupSkip("unsupported: " + sup.reason);
  return setup_once<OpSetup>(ob.name, [&] { return make_setup(b, pr, ob); });
}

namespace {

void run(benchmark::State& state, const OpBench& ob) {
  OpSetup* s = nullptr;
  try {
    s = &set_up(ob);
  } catch (const SetupSkip& e) {
    return state.SkipWithError(e.what());
  } catch (const std::exception& e) {
    return state.SkipWithError(fmt::format("setup failed: {}", e.what()).c_str());
  }
  Backend& b = backend(ob.backend);
  for (auto _ : state) {
    try {
      // Outside the timed region (the timer is the backend's): a GPU's own caches, else the host's.
      before_timed_call(b, ob.warm_cache);
      s->launch->execute();
    } catch (const std::exception& e) {
      release_setup();  // a failed launch may be in any state: set up afresh next time
      state.SkipWithError(fmt::format("execute failed: {}", e.what()).c_str());
      break;
    }
    state.SetIterationTime(s->launch->last_seconds());
  }
  if (state.error_occurred()) return;
  const Cost c = ob.op->cost(ob.preset->params, ob.dtype);
  const double n = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(c.bytes * n));
  state.counters["flops"] = benchmark::Counter(c.flops * n, benchmark::Counter::kIsRate);
  state.counters["prepare_seconds"] = s->prepare_seconds;
  // Which memory roof binds the op (reports: below kReadDominated the read-only stream, else the
  // triad); left out for an op that reads nothing (infinity is not JSON).
  if (const double w = write_share(*ob.op, ob.preset->params, ob.dtype); std::isfinite(w)) state.counters["write_share"] = w;
  state.SetLabel(params_str(ob.op->to_map(ob.preset->params)));
}

}  // namespace

std::vector<std::string> register_op_benchmarks(const Options& o) {
  std::vector<std::string> capped;
  const IterationCap cap(o);
  const auto backends = backend_names();
  for (const Op* op : all_ops()) {
    const std::vector<CaseEntry> presets = op_cases(*op, {.set = CaseSet::Benchmark, .dtypes = o.dtypes});
    for (const auto& bname : backends) {
      if (bname == "reference" && !o.include_reference) continue;
      for (const CaseEntry& e : presets) {
        OpBench ob{e.bench_name(bname), bname, op, e.spec, e.dtype, o.seed, o.warm_cache};
        auto* b = benchmark::RegisterBenchmark(ob.name.c_str(), [ob](benchmark::State& st) { run(st, ob); })
                      ->UseManualTime()
                      ->Unit(benchmark::kMicrosecond);
        if (cap.applies(ob)) {
          b->Iterations(o.cold_iterations);
          capped.push_back(ob.name + "/manual_time");
        }
      }
    }
  }
  return capped;
}

}  // namespace ts::bench
