#include "core/ops/quant/gemm_common.h"

#include <algorithm>
#include <cmath>

#include "core/ops/describe.h"
#include "core/ops/quant/rows_common.h"
#include "core/quant/packing.h"

namespace ts::quant_gemm {

using namespace describe;

namespace {

// The largest |integer factor| a block's scale multiplies in a decoded weight: d (q - 8) for Q4_0,
// d q + m for Q4_1 (both scales bounded alike), d sc q - dmin m for Q4_K (63 x 15 + 63), Q5_K
// (63 x 31 + 63), d sc (q - 32) for Q6_K (128 x 32).
double max_code_product(QuantKind k) {
  switch (k) {
    case QuantKind::Q4_0: return 8;
    case QuantKind::Q4_1: return 16;
    case QuantKind::Q8_0: return 128;
    case QuantKind::Q4_K: return 63 * 15 + 63;
    case QuantKind::Q5_K: return 63 * 31 + 63;
    case QuantKind::Q6_K: return 128 * 32;
    default: return 1;
  }
}

}  // namespace

void gguf_weight(QuantKind k, int64_t n_rows, int64_t n_cols, Tensor& bytes, Rng& r) {
  Tensor src(DType::F32, {n_rows, n_cols});
  normal(src, r);
  quant_rows::fill_blocks(k, src, kWeightBound / max_code_product(k), bytes, r);
}

void f16_scales(Tensor& scales, int64_t bits, Rng& r) {
  const double max_scale = kWeightBound / std::ldexp(1.0, static_cast<int>(bits));
  for (int64_t i = 0; i < scales.numel(); ++i)
    scales.set(i, r.uniform(-1, 1) * std::ldexp(max_scale, -static_cast<int>(r.below(16))));
}

Tolerance tolerance(DType out, int64_t k, double a_max, double w_max) {
  return tol::accumulation(out, static_cast<double>(k), a_max * w_max,
                           fmt::format("max|a| {} x max|dequantized w| {}", magnitude::str(a_max), magnitude::str(w_max)));
}

namespace {
// max |scale[g, j] (q - zero)| over every (k, j), g the group of row k: the layer decoded as the
// reference decodes it (reference/quant_gemm.cpp).
template <class GroupFn, class ValueFn>
double dense_max_abs(int64_t k, int64_t n, const Tensor& scales, GroupFn group, ValueFn q_minus_zero) {
  double m = 0;
  for (int64_t kk = 0; kk < k; ++kk) {
    const int64_t g = group(kk);
    for (int64_t j = 0; j < n; ++j) {
      const double v = std::fabs(scales.get(g * n + j) * q_minus_zero(kk, g, j));
      if (std::isfinite(v)) m = std::max(m, v);
    }
  }
  return m;
}
}  // namespace

double gptq_max_abs(const GptqParams& p, const TensorMap& in) {
  const int32_t* qweight = magnitude::input(in, "qweight").as<int32_t>();
  const int32_t* qzeros = magnitude::input(in, "qzeros").as<int32_t>();
  const int32_t* g_idx = p.desc_act ? magnitude::input(in, "g_idx").as<int32_t>() : nullptr;
  return dense_max_abs(
      p.k, p.n, magnitude::input(in, "scales"), [&](int64_t kk) { return g_idx ? g_idx[kk] : kk / p.group_size; },
      [&](int64_t kk, int64_t g, int64_t j) {
        return double(quant::gptq_code(qweight, p.n, p.bits, kk, j)) - double(quant::gptq_zero(qzeros, p.n, p.bits, g, j));
      });
}

double awq_max_abs(const AwqParams& p, const TensorMap& in) {
  const int32_t* qweight = magnitude::input(in, "qweight").as<int32_t>();
  const int32_t* qzeros = magnitude::input(in, "qzeros").as<int32_t>();
  return dense_max_abs(
      p.k, p.n, magnitude::input(in, "scales"), [&](int64_t kk) { return kk / p.group_size; },
      [&](int64_t kk, int64_t g, int64_t j) {
        return double(quant::awq_code(qweight, p.n, kk, j)) - double(quant::awq_zero(qzeros, p.n, g, j));
      });
}

Cost cost(double weight_bytes, int64_t m, int64_t n, int64_t k, DType dt) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  return Cost{2.0 * dm * dn * dk, weight_bytes + bytes(dt, dm * dk + dm * dn)};
}

}  // namespace ts::quant_gemm
