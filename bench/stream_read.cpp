// baseline/stream_read: a sum over one array far larger than any cache, read on all cores and written
// nowhere. The roof of a kernel that only streams its operand in (a decode GEMV reads its weights and
// writes a few outputs), which the triad, with a write stream beside two read streams, does not give:
// on some machines a read-only stream passes the triad's rate, on others it falls short of it (this
// project's Zen 4 VM: 0.83-1.0x). Like the triad, one measurement of a drifting machine: a kernel
// run minutes apart from it has read up to 1.1x of it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/stream_read.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The wrapping sum of x[0, n), x aligned to a vector: four independent accumulators, so that no load
// waits on the add before it, on the widest SIMD target the CPU runs (loads as wide as the kernels').
uint32_t SumWords(const uint32_t* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Add(a0, hn::Load(d, x + i));
    a1 = hn::Add(a1, hn::Load(d, x + i + N));
    a2 = hn::Add(a2, hn::Load(d, x + i + 2 * N));
    a3 = hn::Add(a3, hn::Load(d, x + i + 3 * N));
  }
  uint32_t sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

}  // namespace ts::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "bench/all_cores.h"
#include "bench/baselines.h"
#include "bench/setup_cache.h"
#include "core/tensor.h"

namespace ts::bench {

HWY_EXPORT(SumWords);

namespace {

// As much as the triad reads (its b and c): 256 MiB.
constexpr size_t kArrayBytes = size_t{256} << 20;
constexpr size_t kCount = kArrayBytes / sizeof(uint32_t);
constexpr size_t kShareAlign = 4096 / sizeof(uint32_t);  // worker shares start on a page (and a vector)
constexpr uint32_t kWord = 3;  // every word: the sum of a share is 3 x its length (mod 2^32)

struct ReadSetup final : Setup {
  int workers = core_count();
  // Allocated like tensors (core/tensor.h), on the same kind of pages as the ops' operands and the
  // triad's arrays; each worker first touches its own share.
  struct Free { void operator()(uint32_t* p) const { free_tensor_memory(p, kArrayBytes); } };
  std::unique_ptr<uint32_t[], Free> x{static_cast<uint32_t*>(allocate_tensor_memory(kArrayBytes))};
};

std::unique_ptr<ReadSetup> make_setup() {
  auto s = std::make_unique<ReadSetup>();
  timed_on_all_cores(s->workers, [&](int w) {
    const Range r = share(kCount, w, s->workers, kShareAlign);
    std::fill(s->x.get() + r.begin, s->x.get() + r.end, kWord);
  });
  return s;
}

void stream_read(benchmark::State& state) {
  ReadSetup* s = setup_or_skip<ReadSetup>(state, "baseline/stream_read", make_setup);
  if (!s) return;
  std::vector<uint32_t> sums(static_cast<size_t>(s->workers));
  for (auto _ : state) {
    const double secs = timed_on_all_cores(s->workers, [&](int w) {
      const Range r = share(kCount, w, s->workers, kShareAlign);
      sums[w] = HWY_DYNAMIC_DISPATCH(SumWords)(s->x.get() + r.begin, r.end - r.begin);
    });
    state.SetIterationTime(secs);
  }
  // Every word read: each share's sum is exact (mod 2^32), so a skipped vector shows.
  for (int w = 0; w < s->workers; ++w) {
    const Range r = share(kCount, w, s->workers, kShareAlign);
    if (sums[w] != static_cast<uint32_t>(kWord * (r.end - r.begin)))
      return state.SkipWithError(fmt::format("wrong sum from worker {}", w).c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(kArrayBytes * state.iterations()));
  state.SetLabel(fmt::format("{} MiB read, {} threads", kArrayBytes >> 20, s->workers));
}

}  // namespace

void register_stream_read() {
  benchmark::RegisterBenchmark("baseline/stream_read", stream_read)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace ts::bench
#endif
