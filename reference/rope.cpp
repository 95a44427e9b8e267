// Reference: qk_norm_rope, qk_norm_rope_batched_per_item, split_qkv_norm_rope,
// split_qkv_norm_rope_into_cache. Rotate-half RoPE (docs/catalog.md, Conventions), in double.
#include <cmath>
#include <functional>

#include "core/ops/core/rope_common.h"
#include "reference/reference.h"
#include "reference/split_rope.h"

namespace ts::ref {
namespace {

// One head vector through the op's mode: 0 copies, 1 RMS-normalises (all of head_dim, then times w)
// and rotates, 2 rotates. Channels past rotary_dim pass through (normalised in mode 1).
class NormRope {
 public:
  NormRope(int64_t mode, int64_t head_dim, int64_t rotary_dim, float eps, const Tensor& w, const TensorMap& t)
      : mode_(mode), hd_(head_dim), half_(rope::rotary(rotary_dim, head_dim) / 2), eps_(eps), w_(to_f64(w)),
        cos_(to_f64(t.at("cos"))), sin_(to_f64(t.at("sin"))) {}

  std::vector<double> operator()(const double* x, int64_t pos) const {
    std::vector<double> a(x, x + hd_);
    if (mode_ == rope::kTransposeOnly) return a;
    if (mode_ == rope::kNormRope) {
      double sum_sq = 0;
      for (int64_t i = 0; i < hd_; ++i) sum_sq += x[i] * x[i];
      // eps is added to the mean square, inside the root (as rms_norm).
      const double r = 1.0 / std::sqrt(sum_sq / static_cast<double>(hd_) + static_cast<double>(eps_));
      for (int64_t i = 0; i < hd_; ++i) a[i] = x[i] * r * w_[i];
    }
    std::vector<double> y = a;
    for (int64_t i = 0; i < half_; ++i) {
      const double c = cos_[pos * half_ + i], s = sin_[pos * half_ + i];
      y[i] = a[i] * c - a[i + half_] * s;
      y[i + half_] = a[i + half_] * c + a[i] * s;
    }
    return y;
  }

 private:
  int64_t mode_, hd_, half_;
  float eps_;
  std::vector<double> w_, cos_, sin_;
};

// Writes vector `v` (length hd) at row `row` of a tensor viewed as [rows, hd].
void put_row(Tensor& out, int64_t row, int64_t hd, const std::vector<double>& v) {
  for (int64_t i = 0; i < hd; ++i) out.set(row * hd + i, v[i]);
}

}  // namespace

void split_norm_rope(const SplitQkvNormRopeParams& p, const TensorMap& t, int64_t first, const HeadSink& put_q,
                     const HeadSink& put_k, const HeadSink& put_v) {
  const auto qkv = to_f64(t.at("qkv"));
  const int64_t hd = p.head_dim, row = (p.q_heads + 2 * p.kv_heads) * hd;
  const NormRope q_rope(p.qk_mode, hd, p.rotary_dim, p.eps, t.at("q_norm_w"), t);
  const NormRope k_rope(p.qk_mode, hd, p.rotary_dim, p.eps, t.at("k_norm_w"), t);
  for (int64_t tok = 0; tok < p.tokens; ++tok) {
    const double* x = qkv.data() + first + tok * row;
    const int64_t pos = p.pos_offset + tok;
    for (int64_t h = 0; h < p.q_heads; ++h) put_q(h, tok, q_rope(x + h * hd, pos));
    for (int64_t h = 0; h < p.kv_heads; ++h) {
      const double* k = x + (p.q_heads + h) * hd;
      const double* v = x + (p.q_heads + p.kv_heads + h) * hd;
      put_k(h, tok, k_rope(k, pos));
      put_v(h, tok, std::vector<double>(v, v + hd));
    }
  }
}

void qk_norm_rope(const QkNormRopeParams& p, TensorMap& t) {
  const auto x = to_f64(t.at("input"));
  const NormRope f(p.mode, p.head_dim, p.rotary_dim, p.eps, t.at("norm_w"), t);
  Tensor& out = t.at("output");
  // input [tokens, heads, hd] -> output [heads, tokens, hd]
  for (int64_t tok = 0; tok < p.tokens; ++tok)
    for (int64_t h = 0; h < p.heads; ++h)
      put_row(out, h * p.tokens + tok, p.head_dim, f(x.data() + (tok * p.heads + h) * p.head_dim, p.pos_offset + tok));
}

void qk_norm_rope_batched_per_item(const QkNormRopeBatchedPerItemParams& p, TensorMap& t) {
  const auto x = to_f64(t.at("input"));
  const auto pos = to_indices(t.at("positions"));
  const NormRope f(p.mode, p.head_dim, p.rotary_dim, p.eps, t.at("norm_w"), t);
  Tensor& out = t.at("output");
  // Each item is one token, so its [heads, 1, hd] block is [heads, hd]: the layout stays [m, heads, hd].
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t h = 0; h < p.heads; ++h) {
      const int64_t row = i * p.heads + h;
      put_row(out, row, p.head_dim, f(x.data() + row * p.head_dim, pos[i]));
    }
}

// q lands head-major in q_out [q_heads, tokens, head_dim] in both.
void split_qkv_norm_rope(const SplitQkvNormRopeParams& p, TensorMap& t) {
  Tensor &q_out = t.at("q_out"), &k_out = t.at("k_out"), &v_out = t.at("v_out");
  split_norm_rope(
      p, t, 0, [&](int64_t h, int64_t tok, const std::vector<double>& q) { put_row(q_out, h * p.tokens + tok, p.head_dim, q); },
      [&](int64_t h, int64_t tok, const std::vector<double>& k) { put_row(k_out, h * p.tokens + tok, p.head_dim, k); },
      [&](int64_t h, int64_t tok, const std::vector<double>& v) { put_row(v_out, h * p.tokens + tok, p.head_dim, v); });
}

void split_qkv_norm_rope_into_cache(const SplitQkvNormRopeIntoCacheParams& p, TensorMap& t) {
  Tensor &q_out = t.at("q_out"), &ck = t.at("cache_k"), &cv = t.at("cache_v");
  // Token t lands at cache row cache_len + t of its kv head; every other row keeps its value.
  auto row = [&](int64_t h, int64_t tok) { return h * p.cache_capacity + p.cache_len + tok; };
  split_norm_rope(
      p, t, 0, [&](int64_t h, int64_t tok, const std::vector<double>& q) { put_row(q_out, h * p.tokens + tok, p.head_dim, q); },
      [&](int64_t h, int64_t tok, const std::vector<double>& k) { put_row(ck, row(h, tok), p.head_dim, k); },
      [&](int64_t h, int64_t tok, const std::vector<double>& v) { put_row(cv, row(h, tok), p.head_dim, v); });
}

}  // namespace ts::ref
