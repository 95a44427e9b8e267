#include "bench/sgemm_common.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/ops/core_params.h"

namespace ts::bench {

std::vector<SgemmShape> sgemm_shapes() {
  std::vector<SgemmShape> out;
  for (const CaseSpec& c : op_or_throw("gemm").benches()) {
    const auto& p = c.params.as<GemmParams>();
    out.push_back({c.name, c.params, p.m, p.n, p.k});
  }
  return out;
}

TensorMap sgemm_inputs(const SgemmShape& s, uint64_t seed) {
  return op_or_throw("gemm").make_case(s.params, DType::F32, seed);
}

std::string check_sgemm_sample(const float* a, const float* b, const float* out, int64_t m, int64_t n,
                               int64_t k) {
  const double u = std::numeric_limits<float>::epsilon() / 2;
  const double gamma = k * u / (1 - k * u);
  // Corners and a stride that is prime to typical tile sizes, so every tile position gets a sample.
  std::vector<std::pair<int64_t, int64_t>> at = {{0, 0}, {m - 1, n - 1}, {0, n - 1}, {m - 1, 0}};
  for (int64_t s = 0; s < 64; ++s) at.push_back({(s * 37) % m, (s * 997 + 13) % n});
  for (auto [i, j] : at) {
    double dot = 0, mag = 0;
    for (int64_t p = 0; p < k; ++p) {
      const double t = double(a[i * k + p]) * double(b[j * k + p]);
      dot += t;
      mag += std::fabs(t);
    }
    const double got = out[i * n + j];
    // The double reference's own error (k * 2^-53 * mag) is far below the bound and is absorbed.
    if (!(std::fabs(got - dot) <= gamma * mag))
      return fmt::format("out[{},{}] = {} but a @ b^T = {} (bound {:.3g})", i, j, got, dot, gamma * mag);
  }
  return "";
}

void report_sgemm(benchmark::State& state, const SgemmShape& s, const std::string& library) {
  const Cost c = op_or_throw("gemm").cost(s.params, DType::F32);
  const double n = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(c.bytes * n));
  state.counters["flops"] = benchmark::Counter(c.flops * n, benchmark::Counter::kIsRate);
  state.SetLabel(params_str(op_or_throw("gemm").to_map(s.params)) + " " + library);
}

}  // namespace ts::bench
