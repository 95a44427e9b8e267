// baseline/fma_peak: independent FMA chains in registers on all cores, no memory traffic: the
// machine's F32 compute peak, the roof that compute-bound kernels are measured against.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "bench/all_cores.h"
#include "bench/baselines.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TS_X86 1
#endif

namespace ts::bench {

namespace {

// Enough independent accumulators to cover FMA latency x FMA ports on current cores (4 x 2 = 8).
constexpr int kChains = 12;
// Per worker per iteration: ~1.6 GFLOP with 8-wide FMA, ~15 ms on a 3.5 GHz core with two FMA pipes.
constexpr long kRounds = 1 << 23;

struct Kernel {
  const char* isa;
  int lanes;
  int flops_per_lane_op;  // 2 for an FMA, 2 for a separate mul + add
  float (*run)(long rounds, float mul, float add);
};

#if TS_X86
// acc = acc * mul + add converges to add / (1 - mul): no overflow, no denormals for any round count.
__attribute__((target("avx512f"))) float run_avx512(long rounds, float mul, float add) {
  __m512 acc[kChains];
  const __m512 m = _mm512_set1_ps(mul), a = _mm512_set1_ps(add);
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(float(j));
  for (long r = 0; r < rounds; ++r)
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm512_add_ps(sum, acc[j]);
  float out[16];
  _mm512_storeu_ps(out, sum);
  float total = 0;
  for (float v : out) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float run_avx2(long rounds, float mul, float add) {
  __m256 acc[kChains];
  const __m256 m = _mm256_set1_ps(mul), a = _mm256_set1_ps(add);
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_ps(float(j));
  for (long r = 0; r < rounds; ++r)
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
  __m256 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm256_add_ps(sum, acc[j]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  float total = 0;
  for (float v : out) total += v;
  return total;
}
#endif

// No FMA instructions: separate multiply and add, whatever width the compiler picks.
float run_portable(long rounds, float mul, float add) {
  float acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = float(j);
  for (long r = 0; r < rounds; ++r)
    for (int j = 0; j < kChains; ++j) acc[j] = acc[j] * mul + add;
  float sum = 0;
  for (float v : acc) sum += v;
  return sum;
}

// AVX-512 first: on cores with two 512-bit FMA pipes it doubles the AVX2 figure, and on cores that
// split 512-bit ops in two (Zen 4) it matches it.
Kernel pick_kernel() {
#if TS_X86
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", 16, 2, run_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2+fma", 8, 2, run_avx2};
#endif
  return {"scalar mul+add", 1, 2, run_portable};
}

void fma_peak(benchmark::State& state) {
  static const Kernel k = pick_kernel();
  const int workers = core_count();
  // Through volatiles so the compiler cannot fold the chains.
  volatile float mul = 0.999999f, add = 1e-6f;
  std::vector<float> sink(workers);
  for (auto _ : state) {
    const double secs = timed_on_all_cores(workers, [&](int w) { sink[w] = k.run(kRounds, mul, add); });
    state.SetIterationTime(secs);
  }
  benchmark::DoNotOptimize(sink.data());
  const double flops_per_iter = double(workers) * kRounds * kChains * k.lanes * k.flops_per_lane_op;
  state.counters["flops"] = benchmark::Counter(flops_per_iter * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(fmt::format("{}, {} chains, {} threads", k.isa, kChains, workers));
}

}  // namespace

void register_fma_peak() {
  benchmark::RegisterBenchmark("baseline/fma_peak", fma_peak)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace ts::bench
