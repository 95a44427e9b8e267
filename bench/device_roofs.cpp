// baseline/device_<roof>/<backend>: the device's own read stream, copy and FMA peaks
// (core/device_roofs.h), measured by each backend with a device of its own kind, so that its op
// benchmarks are judged against its device, not the host (ci/bench-summary.py, report/benchruns.py).
// Timed on the backend's clock (device timestamps), like the ops; after the last iteration the
// outputs come back and are checked, so a kernel that skipped work fails instead of flattering.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <exception>
#include <memory>
#include <string>

#include "bench/baselines.h"
#include "bench/setup_cache.h"
#include "core/backend.h"

namespace ts::bench {

namespace {

struct RoofSetup final : Setup {
  std::unique_ptr<Backend::RoofRun> run;
};

void device_roof(benchmark::State& state, const std::string& backend_name, Roof r, const std::string& key) {
  Backend& b = backend(backend_name);
  const Availability a = b.availability();
  if (!a.ok) return state.SkipWithError(("backend unavailable: " + a.detail).c_str());
  const Support sup = b.roof_support(r);
  if (!sup.ok) return state.SkipWithError(("unsupported: " + sup.reason).c_str());
  RoofSetup* s = setup_or_skip<RoofSetup>(state, key, [&] {
    auto made = std::make_unique<RoofSetup>();
    made->run = b.prepare_roof(r);
    made->run->launch->execute();  // warm-up: pipeline or program build, first touch of the pages
    return made;
  });
  if (!s) return;
  Backend::RoofRun& run = *s->run;
  try {
    for (auto _ : state) {
      run.launch->execute();
      state.SetIterationTime(run.launch->last_seconds());
    }
    run.launch->finish();
  } catch (const std::exception& e) {
    release_setup();
    return state.SkipWithError(fmt::format("execute failed: {}", e.what()).c_str());
  }
  if (const std::string bad = check_roof(run.c); !bad.empty()) {
    release_setup();
    return state.SkipWithError(("wrong result: " + bad).c_str());
  }
  const double n = static_cast<double>(state.iterations());
  if (run.c.bytes > 0) state.SetBytesProcessed(static_cast<int64_t>(run.c.bytes * n));
  if (run.c.flops > 0) state.counters["flops"] = benchmark::Counter(run.c.flops * n, benchmark::Counter::kIsRate);
  state.SetLabel(run.detail);
}

}  // namespace

void register_device_roofs() {
  for (const std::string& name : backend_names()) {
    if (!backend(name).has_device_roofs()) continue;
    for (Roof r : kRoofs) {
      const std::string key = fmt::format("baseline/{}/{}", roof_name(r), name);
      benchmark::RegisterBenchmark(key.c_str(), [name, r, key](benchmark::State& st) { device_roof(st, name, r, key); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace ts::bench
