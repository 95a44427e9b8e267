// baseline/cblas_sgemm/<gemm preset>: OpenBLAS SGEMM on all cores, the CPU gemm figure to beat.
// Same layout as the gemm op: row-major a [m,k], b [n,k] used transposed, out [m,n].
#include <cblas.h>

#include <chrono>

#include <fmt/format.h>

#include "bench/baselines.h"
#include "bench/setup_cache.h"
#include "bench/sgemm_common.h"

namespace ts::bench {

namespace {

struct CblasSetup final : Setup {
  TensorMap io;
};

void sgemm(const SgemmShape& s, TensorMap& io) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(s.m), int(s.n), int(s.k), 1.0f, io.at("a").as<float>(),
              int(s.k), io.at("b").as<float>(), int(s.k), 0.0f, io.at("out").as<float>(), int(s.n));
}

void cblas_bench(benchmark::State& state, const SgemmShape& s, const std::string& key) {
  CblasSetup* setup = setup_or_skip<CblasSetup>(state, key, [&] {
    auto c = std::make_unique<CblasSetup>();
    c->io = sgemm_inputs(s, 1);
    sgemm(s, c->io);  // warm-up: OpenBLAS starts its thread pool on first use
    return c;
  });
  if (!setup) return;
  TensorMap& io = setup->io;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    sgemm(s, io);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const std::string bad =
      check_sgemm_sample(io.at("a").as<float>(), io.at("b").as<float>(), io.at("out").as<float>(), s.m, s.n, s.k);
  if (!bad.empty()) return state.SkipWithError(("wrong result: " + bad).c_str());
  report_sgemm(state, s, fmt::format("OpenBLAS {} threads", openblas_get_num_threads()));
}

}  // namespace

void register_cblas_sgemm() {
  for (const SgemmShape& s : sgemm_shapes()) {
    const std::string name = "baseline/cblas_sgemm/" + s.preset;
    benchmark::RegisterBenchmark(name.c_str(), [s, name](benchmark::State& st) { cblas_bench(st, s, name); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace ts::bench
