// Reference: the tensor family (linear_3d, linear_3d_bias, silu, add, mul, apply_rope_positions,
// apply_rope_partial), in double; gqa_attention is reference/attention.cpp's.
#include <cmath>
#include <vector>

#include "core/ops/tensor/broadcast.h"
#include "core/ops/tensor/rope_angle.h"
#include "reference/reference.h"

namespace ts::ref {
namespace {

// out[r, j] = sum_k x[r, k] w[j, k] (+ bias[j]) over the batch * seq rows of x.
void linear(const Linear3dParams& p, TensorMap& t, const std::vector<double>* bias) {
  const auto x = to_f64(t.at("x")), w = to_f64(t.at("weight"));
  Tensor& out = t.at("out");
  const int64_t rows = p.batch * p.seq;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < p.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < p.k; ++k) acc += x[r * p.k + k] * w[j * p.k + k];
      out.set(r * p.n + j, bias ? acc + (*bias)[j] : acc);  // the bias joins the dot before the one rounding
    }
}

template <class F> void broadcast(const BroadcastParams& p, TensorMap& t, F op) {
  const auto a = to_f64(t.at("a")), b = to_f64(t.at("b"));
  Tensor& out = t.at("out");
  const bcast::Strides s = bcast::strides(p);
  for (int64_t i0 = 0; i0 < p.d0; ++i0)
    for (int64_t i1 = 0; i1 < p.d1; ++i1)
      for (int64_t i2 = 0; i2 < p.d2; ++i2) {
        const int64_t o = (i0 * p.d1 + i1) * p.d2 + i2;
        out.set(o, op(a[o], b[s.at(i0, i1, i2)]));
      }
}

// Rotate-half over the first `rot` channels of each head row: pair (i, i + rot/2) turns by
// pos * base^(-2i/rot), angle and cos / sin in double; channels rot .. head_dim are copied.
void rope(const RopePositionsParams& p, int64_t rot, TensorMap& t) {
  const auto x = to_f64(t.at("x"));
  const uint32_t* pos = t.at("positions").as<uint32_t>();
  Tensor& out = t.at("out");
  const int64_t hd = p.head_dim, half = rot / 2;
  std::vector<double> y(x.size());
  for (int64_t s = 0; s < p.seq; ++s)
    for (int64_t h = 0; h < p.heads; ++h) {
      const int64_t row = (s * p.heads + h) * hd;
      for (int64_t c = rot; c < hd; ++c) y[row + c] = x[row + c];
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(pos[s]) * rope_angle::inv_freq(p.base, rot, i);
        const double c = std::cos(angle), sn = std::sin(angle), a = x[row + i], b = x[row + half + i];
        y[row + i] = a * c - b * sn;
        y[row + half + i] = b * c + a * sn;
      }
    }
  from_f64(out, y);
}

}  // namespace

void linear_3d(const Linear3dParams& p, TensorMap& t) { linear(p, t, nullptr); }

void linear_3d_bias(const Linear3dBiasParams& p, TensorMap& t) {
  const auto bias = to_f64(t.at("bias"));
  linear(p, t, &bias);
}

void silu(const SiluParams& p, TensorMap& t) {
  const auto x = to_f64(t.at("x"));
  Tensor& out = t.at("out");
  for (int64_t i = 0; i < p.len; ++i) out.set(i, x[i] / (1.0 + std::exp(-x[i])));
}

void add(const BroadcastParams& p, TensorMap& t) {
  broadcast(p, t, [](double a, double b) { return a + b; });
}

void mul(const BroadcastParams& p, TensorMap& t) {
  broadcast(p, t, [](double a, double b) { return a * b; });
}

void apply_rope_positions(const RopePositionsParams& p, TensorMap& t) { rope(p, p.head_dim, t); }

void apply_rope_partial(const RopePartialParams& p, TensorMap& t) { rope(p, p.rotary_dim, t); }

}  // namespace ts::ref
