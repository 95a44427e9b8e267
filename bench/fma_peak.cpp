// baseline/fma_peak: independent FMA chains in registers on all cores, no memory traffic: the
// machine's F32 compute peak, the roof that compute-bound kernels are measured against.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/fma_peak.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

// Enough independent accumulators to cover FMA latency x FMA ports on current cores (4 x 2 = 8).
#define TS_FMA_CHAINS 12

HWY_BEFORE_NAMESPACE();
namespace ts::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;


// acc = acc * mul + add converges to add / (1 - mul): no overflow, no denormals for any round count.
// Written once for every SIMD target Highway compiles; the widest the CPU runs is dispatched.
float FmaChains(long rounds, float mul, float add) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  V acc[TS_FMA_CHAINS];  // fully unrolled below, so the chains live in registers
  const V m = hn::Set(d, mul), a = hn::Set(d, add);
  for (int j = 0; j < TS_FMA_CHAINS; ++j) acc[j] = hn::Set(d, float(j));
  for (long r = 0; r < rounds; ++r) {
#pragma GCC unroll 16
    for (int j = 0; j < TS_FMA_CHAINS; ++j) acc[j] = hn::MulAdd(acc[j], m, a);
  }
  V sum = acc[0];
  for (int j = 1; j < TS_FMA_CHAINS; ++j) sum = hn::Add(sum, acc[j]);
  return hn::GetLane(hn::SumOfLanes(d, sum));
}

// Lanes of the vectors FmaChains runs on, for the FLOP count.
int FmaLanes() { return static_cast<int>(hn::Lanes(hn::ScalableTag<float>())); }

}  // namespace ts::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <vector>

#include "bench/all_cores.h"
#include "bench/baselines.h"
#include "hwy/targets.h"

namespace ts::bench {

HWY_EXPORT(FmaChains);
HWY_EXPORT(FmaLanes);

namespace {

// Per worker per iteration: ~1.6 GFLOP with 8-wide FMA, ~15 ms on a 3.5 GHz core with two FMA pipes.
constexpr long kRounds = 1 << 23;

void fma_peak(benchmark::State& state) {
  const int workers = core_count(), lanes = HWY_DYNAMIC_DISPATCH(FmaLanes)();
  const int64_t target = hwy::SupportedTargets() & HWY_TARGETS;
  // Through volatiles so the compiler cannot fold the chains.
  volatile float mul = 0.999999f, add = 1e-6f;
  std::vector<float> sink(workers);
  for (auto _ : state) {
    const double secs = timed_on_all_cores(workers, [&](int w) { sink[w] = HWY_DYNAMIC_DISPATCH(FmaChains)(kRounds, mul, add); });
    state.SetIterationTime(secs);
  }
  benchmark::DoNotOptimize(sink.data());
  const double flops_per_iter = double(workers) * kRounds * TS_FMA_CHAINS * lanes * 2.0;  // an FMA: 2
  state.counters["flops"] = benchmark::Counter(flops_per_iter * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(fmt::format("{}, {} chains, {} threads", hwy::TargetName(target & -target),
                            TS_FMA_CHAINS, workers));
}

}  // namespace

void register_fma_peak() {
  benchmark::RegisterBenchmark("baseline/fma_peak", fma_peak)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace ts::bench
#endif
