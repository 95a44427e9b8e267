#include "bench/op_benches.h"

#include <algorithm>
#include <exception>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/cache_flush.h"
#include "bench/setup_cache.h"
#include "core/backend.h"
#include "core/op.h"

namespace ts::bench {

namespace {

struct OpBench {
  std::string name;  // also the setup cache key
  std::string backend;
  const Op* op;
  const CaseSpec* preset;
  DType dtype;
  uint64_t seed;
  bool warm_cache;
};

// Declared in this order so the launch is destroyed before the tensors it is bound to.
struct OpSetup final : Setup {
  TensorMap io;
  std::unique_ptr<Launch> launch;
};

std::unique_ptr<OpSetup> make_setup(Backend& b, const Problem& pr, const OpBench& ob) {
  auto s = std::make_unique<OpSetup>();
  s->io = ob.op->make_case(pr, ob.seed);
  ob.op->validate(pr, s->io);
  s->launch = b.prepare(pr, s->io);
  s->launch->execute();  // warm-up: first-use compilation, page faults, caches
  return s;
}

void run(benchmark::State& state, const OpBench& ob) {
  OpSetup* s = nullptr;
  try {
    Backend& b = backend(ob.backend);
    const Availability a = b.availability();
    if (!a.ok) return state.SkipWithError(("backend unavailable: " + a.detail).c_str());
    ob.op->check_params(ob.preset->params);
    const Problem pr = make_problem(*ob.op, ob.preset->params, ob.dtype);
    const Support sup = b.supports(pr);
    if (!sup.ok) return state.SkipWithError(("unsupported: " + sup.reason).c_str());
    s = &setup_once<OpSetup>(ob.name, [&] { return make_setup(b, pr, ob); });
  } catch (const std::exception& e) {
    return state.SkipWithError(fmt::format("setup failed: {}", e.what()).c_str());
  }
  for (auto _ : state) {
    if (!ob.warm_cache) flush_caches();  // outside the timed region: the timer is the backend's
    try {
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
  state.SetLabel(params_str(ob.op->to_map(ob.preset->params)));
}

// Google Benchmark picks the iteration count from the timed (manual) time alone, until it adds up to
// --benchmark_min_time; the cache flush before each iteration is not in it. An op of a microsecond then
// gets ~10^5 iterations and ~10^5 flushes of milliseconds each: minutes for one benchmark. An op small
// by its cost model (fewer bytes than the flush reads, and fewer FLOPs than kMinBalance per flushed
// byte) takes at most about as long as the flush on any machine whose balance (peak FLOP/s over memory
// bandwidth) is at least kMinBalance, so it gets a fixed iteration count instead: N flushes, N short
// ops. A larger op takes at least about as long as the flush, which then at most doubles Google
// Benchmark's own budget. The choice depends only on the cost model, not on a measurement, so a
// benchmark's name (Google Benchmark appends /iterations:N) is the same in every run.
constexpr double kMinBalance = 4.0;  // FLOP per byte; this 2-core EPYC: ~5, GPUs: 10-100

bool needs_iteration_cap(const Op& op, const CaseSpec& preset, DType dt, const Options& o) {
  if (o.warm_cache || o.cold_iterations == 0) return false;
  try {
    op.check_params(preset.params);
    const Cost c = op.cost(preset.params, dt);
    const double flush = static_cast<double>(flush_buffer_bytes());
    return c.bytes < flush && c.flops < kMinBalance * flush;
  } catch (const std::exception&) {
    return false;  // the benchmark reports the bad preset when it runs
  }
}

}  // namespace

int register_op_benchmarks(const Options& o) {
  int count = 0;
  const auto backends = backend_names();
  for (const Op* op : all_ops())
    for (const auto& bname : backends) {
      if (bname == "reference" && !o.include_reference) continue;
      for (const CaseSpec& preset : op->benches())
        for (DType dt : o.dtypes) {
          if (std::find(preset.dtypes.begin(), preset.dtypes.end(), dt) == preset.dtypes.end()) continue;
          OpBench ob{fmt::format("{}/{}/{}/{}", op->name(), bname, preset.name, dtype_name(dt)), bname, op,
                     &preset, dt, o.seed, o.warm_cache};
          auto* b = benchmark::RegisterBenchmark(ob.name.c_str(), [ob](benchmark::State& st) { run(st, ob); })
                        ->UseManualTime()
                        ->Unit(benchmark::kMicrosecond);
          if (needs_iteration_cap(*op, preset, dt, o)) b->Iterations(o.cold_iterations);
          ++count;
        }
    }
  return count;
}

}  // namespace ts::bench
