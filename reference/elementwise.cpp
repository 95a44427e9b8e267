// Reference: elementwise ops (gelu, the in-place adds, add_bias, the SiLU-gated splits).
#include <cmath>

#include "reference/reference.h"

namespace ts::ref {
namespace {

double silu(double g) { return g / (1.0 + std::exp(-g)); }

}  // namespace

void gelu(const GeluParams& p, TensorMap& t) {
  const auto x = to_f64(t.at("x"));
  Tensor& out = t.at("out");
  // The erf form (PyTorch's default), not the tanh approximation.
  for (int64_t i = 0; i < p.len; ++i) out.set(i, 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
}

void add_inplace(const AddInplaceParams& p, TensorMap& t) {
  Tensor& residual = t.at("residual");
  const auto x = to_f64(t.at("x"));
  for (int64_t i = 0; i < p.len; ++i) residual.set(i, residual.get(i) + x[i]);
}

void scaled_add_inplace(const ScaledAddInplaceParams& p, TensorMap& t) {
  Tensor& dst = t.at("dst");
  const auto src = to_f64(t.at("src"));
  const double scale = static_cast<double>(p.scale);
  for (int64_t i = 0; i < p.len; ++i) dst.set(i, dst.get(i) + scale * src[i]);
}

void add_bias(const AddBiasParams& p, TensorMap& t) {
  Tensor& data = t.at("data");
  const auto bias = to_f64(t.at("bias"));
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t c = 0; c < p.cols; ++c) data.set(r * p.cols + c, data.get(r * p.cols + c) + bias[c]);
}

void fused_silu_mul_split(const FusedSiluMulSplitParams& p, TensorMap& t) {
  const auto gu = to_f64(t.at("gate_up"));
  Tensor& out = t.at("out");
  for (int64_t r = 0; r < p.tokens; ++r) {
    const double* gate = &gu[r * 2 * p.im];
    const double* up = gate + p.im;
    for (int64_t c = 0; c < p.im; ++c) out.set(r * p.im + c, silu(gate[c]) * up[c]);
  }
}

void fused_silu_mul_split_strided(const FusedSiluMulSplitStridedParams& p, TensorMap& t) {
  const auto gu = to_f64(t.at("gate_up"));
  Tensor& out = t.at("out");
  const int64_t im = p.intermediate;
  // Only the window's rows are written; the rest of `out` keeps its values (it is in-out).
  for (int64_t r = 0; r < p.tokens; ++r) {
    const double* gate = &gu[(p.in_row_offset + r) * 2 * im];
    const double* up = gate + im;
    for (int64_t c = 0; c < im; ++c) out.set((p.out_row_offset + r) * im + c, silu(gate[c]) * up[c]);
  }
}

}  // namespace ts::ref
