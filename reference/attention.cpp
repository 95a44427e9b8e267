// Reference: flash_attention, mla_attention, flash_attention_batched_per_cache. Plain softmax
// attention in double: scores, a two-pass softmax (max, then exp and sum), the weighted sum of values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "reference/attend.h"

#include "core/ops/core/attention_common.h"
#include "reference/reference.h"

namespace ts::ref {
namespace {

double dot(const double* a, const double* b, int64_t n) {
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += a[i] * b[i];
  return acc;
}

// Scores -> probabilities in place; returns the log of the sum of exp(s). Subtracting the max keeps
// exp finite for logits of any size. Special values (docs/catalog.md, "Special values"): a NaN or a
// +Inf score makes every probability NaN (exp(s - max) is NaN for it: NaN, or Inf - Inf); a -Inf
// score is a masked key of probability 0, and a row whose every score is -Inf has no key to attend
// to: every probability 0, log -inf, and the caller's output stays zeros, as with no visible key.
double softmax(std::vector<double>& s) {
  const double ninf = -std::numeric_limits<double>::infinity();
  double m = ninf;
  bool nan = false;
  for (double x : s) {
    if (std::isnan(x)) nan = true;
    else m = std::max(m, x);
  }
  if (!nan && m == ninf) {
    std::fill(s.begin(), s.end(), 0.0);
    return ninf;
  }
  double sum = 0;
  for (double& x : s) sum += (x = std::exp(x - m));
  for (double& x : s) x /= sum;
  return m + std::log(sum);
}

// One query row against keys/values row `begin..end` of a [rows, hd] block.
void attend_row(const double* q, const double* k, const double* v, attn::KeyRange r, int64_t hd, double scale,
                double* out) {
  attend_rows(q, k + r.begin * hd, v + r.begin * hd, r.size(), hd, scale, out);
}

}  // namespace

double attend_rows(const double* q, const double* k, const double* v, int64_t n, int64_t hd, double scale,
                   double* out) {
  std::fill(out, out + hd, 0.0);
  if (n <= 0) return -std::numeric_limits<double>::infinity();
  std::vector<double> p(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) p[j] = scale * dot(q, k + j * hd, hd);
  const double lse = softmax(p);
  if (lse == -std::numeric_limits<double>::infinity()) return lse;  // every key masked: zeros
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < hd; ++d) out[d] += p[j] * v[j * hd + d];
  return lse;
}

void flash_attention(const FlashAttentionParams& p, TensorMap& t) {
  const auto q = to_f64(t.at("q")), k = to_f64(t.at("k")), v = to_f64(t.at("v"));
  const int64_t hd = p.head_dim, S = p.kv_rows(), group = p.num_heads / p.num_kv_heads;
  std::vector<double> out(static_cast<size_t>(p.batch * p.num_heads * p.q_len * hd));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.num_heads; ++h) {
      const int64_t kv_head = b * p.num_kv_heads + h / group;  // GQA: query head h reads kv head h / group
      for (int64_t i = 0; i < p.q_len; ++i) {
        const int64_t row = (b * p.num_heads + h) * p.q_len + i;
        attend_row(q.data() + row * hd, k.data() + kv_head * S * hd, v.data() + kv_head * S * hd,
                   attn::visible(p.pos_offset + i, p.kv_len, p.causal, p.sliding_window), hd, p.scale,
                   out.data() + row * hd);
      }
    }
  from_f64(t.at("out"), out);
}

void mla_attention(const MlaAttentionParams& p, TensorMap& t) {
  const auto q = to_f64(t.at("q")), c = to_f64(t.at("kv_compressed")), kr = to_f64(t.at("kv_rope"));
  const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
  std::vector<double> out(static_cast<size_t>(p.batch * p.num_heads * p.q_len * r));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.num_heads; ++h)
      for (int64_t i = 0; i < p.q_len; ++i) {
        const int64_t row = (b * p.num_heads + h) * p.q_len + i;
        const double* qr = q.data() + row * (r + dr);  // q[:r] meets the latent c, q[r:] the rope key
        const double* cb = c.data() + b * p.kv_len * r;
        const double* kb = kr.data() + b * p.kv_len * dr;
        double* o = out.data() + row * r;
        // MLA has no sliding window: only causality and kv_len bound the keys.
        const attn::KeyRange vis = attn::visible(p.pos_offset + i, p.kv_len, p.causal, 0);
        if (vis.size() == 0) continue;
        std::vector<double> w(static_cast<size_t>(vis.size()));
        for (int64_t j = vis.begin; j < vis.end; ++j)
          w[j - vis.begin] = p.scale * (dot(qr, cb + j * r, r) + dot(qr + r, kb + j * dr, dr));
        if (softmax(w) == -std::numeric_limits<double>::infinity()) continue;  // every key masked: zeros
        for (int64_t j = vis.begin; j < vis.end; ++j)
          for (int64_t d = 0; d < r; ++d) o[d] += w[j - vis.begin] * cb[j * r + d];  // values are c itself
      }
  from_f64(t.at("out"), out);
}

void flash_attention_batched_per_cache(const FlashAttentionBatchedPerCacheParams& p, TensorMap& t) {
  const auto q = to_f64(t.at("q"));
  const auto lens = to_indices(t.at("kv_lens"));
  const int64_t hd = p.hd, group = p.nq / p.nkv;
  std::vector<double> out(static_cast<size_t>(p.m * p.nq * hd));
  for (int64_t i = 0; i < p.m; ++i) {
    const auto k = to_f64(t.at("k_caches." + std::to_string(i)));
    const auto v = to_f64(t.at("v_caches." + std::to_string(i)));
    // A decode query sits after every cached row: it sees rows [0, kv_lens[i]).
    const attn::KeyRange vis{0, lens[i]};
    for (int64_t h = 0; h < p.nq; ++h) {
      const int64_t row = i * p.nq + h, kv_head = h / group;
      attend_row(q.data() + row * hd, k.data() + kv_head * p.capacity * hd, v.data() + kv_head * p.capacity * hd,
                 vis, hd, p.scale, out.data() + row * hd);
    }
  }
  from_f64(t.at("out"), out);
}

}  // namespace ts::ref
