// Reference: row normalisations (rms_norm, fused_add_rms_norm, layer_norm).
#include <cmath>

#include "reference/reference.h"

namespace ts::ref {
namespace {

// 1 / sqrt(mean(x^2) + eps) over one row. eps sits inside the square root (the seed's formula); it
// is the float parameter widened to double, the very value a backend's F32 kernel sees.
double inv_rms(const double* row, int64_t dim, float eps) {
  double ss = 0;
  for (int64_t c = 0; c < dim; ++c) ss += row[c] * row[c];
  return 1.0 / std::sqrt(ss / static_cast<double>(dim) + static_cast<double>(eps));
}

void normalise_rows(const std::vector<double>& x, const std::vector<double>& w, int64_t tokens, int64_t dim,
                    float eps, Tensor& out) {
  for (int64_t r = 0; r < tokens; ++r) {
    const double* row = &x[r * dim];
    const double inv = inv_rms(row, dim, eps);
    for (int64_t c = 0; c < dim; ++c) out.set(r * dim + c, row[c] * inv * w[c]);
  }
}

}  // namespace

void rms_norm(const RmsNormParams& p, TensorMap& t) {
  normalise_rows(to_f64(t.at("x")), to_f64(t.at("w")), p.tokens, p.dim, p.eps, t.at("out"));
}

void fused_add_rms_norm(const FusedAddRmsNormParams& p, TensorMap& t) {
  Tensor& residual = t.at("residual");
  const auto x = to_f64(t.at("x"));
  auto sum = to_f64(residual);
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += x[i];
  from_f64(residual, sum);
  // The norm reads the residual as stored, i.e. rounded to the case dtype: what a kernel that writes
  // the residual and normalises the same values computes, and what the next layer reads back.
  normalise_rows(to_f64(residual), to_f64(t.at("w")), p.tokens, p.dim, p.eps, t.at("out"));
}

void layer_norm(const LayerNormParams& p, TensorMap& t) {
  const auto x = to_f64(t.at("x")), gamma = to_f64(t.at("gamma")), beta = to_f64(t.at("beta"));
  Tensor& out = t.at("out");
  const double n = static_cast<double>(p.dim);
  for (int64_t r = 0; r < p.tokens; ++r) {
    const double* row = &x[r * p.dim];
    double mean = 0;
    for (int64_t c = 0; c < p.dim; ++c) mean += row[c];
    mean /= n;
    // Biased variance (divide by dim, as PyTorch's LayerNorm), taken around the mean in a second pass.
    double var = 0;
    for (int64_t c = 0; c < p.dim; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= n;
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(p.eps));
    for (int64_t c = 0; c < p.dim; ++c) out.set(r * p.dim + c, (row[c] - mean) * inv * gamma[c] + beta[c]);
  }
}

}  // namespace ts::ref
