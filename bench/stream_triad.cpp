// baseline/stream_triad: a[i] = b[i] + s * c[i] on all cores over arrays far larger than any cache,
// the sustainable memory bandwidth that memory-bound kernels are measured against.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <memory>
#include <vector>

#include "core/tensor.h"

#include "bench/all_cores.h"
#include "bench/baselines.h"
#include "bench/setup_cache.h"

namespace ts::bench {

namespace {

constexpr size_t kArrayBytes = size_t{128} << 20;  // each of a, b, c: 128 MiB
constexpr size_t kCount = kArrayBytes / sizeof(float);
constexpr size_t kLine = 64 / sizeof(float);
// Exact in F32, so the check below is an equality: 1 + 3 * 2 = 7.
constexpr float kB = 1.0f, kC = 2.0f, kScalar = 3.0f;

struct TriadSetup final : Setup {
  int workers = core_count();
  // Allocated like tensors (core/tensor.h), so op and baseline run on the same kind of pages;
  // left untouched here, so each worker's first touch places its part.
  struct Free { void operator()(float* p) const { free_tensor_memory(p, kArrayBytes); } };
  using Array = std::unique_ptr<float[], Free>;
  static float* alloc() { return static_cast<float*>(allocate_tensor_memory(kArrayBytes)); }
  Array a{alloc()}, b{alloc()}, c{alloc()};
};

void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, float s, Range r) {
  for (size_t i = r.begin; i < r.end; ++i) a[i] = b[i] + s * c[i];
}

std::unique_ptr<TriadSetup> make_setup() {
  auto s = std::make_unique<TriadSetup>();
  // Each worker first touches the part it will stream, so pages sit near the core that uses them.
  timed_on_all_cores(s->workers, [&](int w) {
    const Range r = share(kCount, w, s->workers, kLine);
    for (size_t i = r.begin; i < r.end; ++i) {
      s->a[i] = 0.0f;
      s->b[i] = kB;
      s->c[i] = kC;
    }
  });
  return s;
}

void stream_triad(benchmark::State& state) {
  TriadSetup* s = setup_or_skip<TriadSetup>(state, "baseline/stream_triad", make_setup);
  if (!s) return;
  for (auto _ : state) {
    const double secs = timed_on_all_cores(s->workers, [&](int w) {
      triad(s->a.get(), s->b.get(), s->c.get(), kScalar, share(kCount, w, s->workers, kLine));
    });
    state.SetIterationTime(secs);
  }
  for (size_t i = 0; i < kCount; i += 4099)
    if (s->a[i] != kB + kScalar * kC) return state.SkipWithError(fmt::format("wrong result at {}", i).c_str());
  // STREAM convention: read b and c, write a; the write-allocate read of a is not counted.
  state.SetBytesProcessed(static_cast<int64_t>(3 * kArrayBytes * state.iterations()));
  state.counters["flops"] = benchmark::Counter(2.0 * kCount * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(fmt::format("3 x {} MiB F32, {} threads", kArrayBytes >> 20, s->workers));
}

}  // namespace

void register_stream_triad() {
  benchmark::RegisterBenchmark("baseline/stream_triad", stream_triad)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace ts::bench
