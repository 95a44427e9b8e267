#include "core/ops/core/attention_common.h"

#include <algorithm>
#include <cmath>

namespace ts::attn {

KeyRange visible(int64_t pos, int64_t kv_len, bool causal, int64_t sliding_window) {
  // pos + 1 fits: validation bounds pos_offset + q_len (checked:: raises an Error if it ever did not).
  const int64_t next = checked::add(pos, 1, "query position + 1");
  KeyRange r{0, kv_len};
  if (causal) r.end = std::min(r.end, next);
  if (sliding_window > 0) r.begin = std::max<int64_t>(0, next - sliding_window);
  // A query past every key (a window that starts after kv_len) sees none: an empty range at its end,
  // never a begin past the keys for a caller to offset a pointer by.
  r.begin = std::min(r.begin, r.end);
  return r;
}

double visible_pairs(int64_t q_len, int64_t pos_offset, int64_t kv_len, bool causal, int64_t sliding_window) {
  double n = 0;
  for (int64_t i = 0; i < q_len; ++i) n += static_cast<double>(visible(pos_offset + i, kv_len, causal, sliding_window).size());
  return n;
}

void check_gqa(int64_t num_heads, int64_t num_kv_heads, const char* heads_name, const char* kv_heads_name) {
  describe::positive(num_heads, heads_name);
  describe::positive(num_kv_heads, kv_heads_name);
  check(num_heads % num_kv_heads == 0, "GQA: {} = {} is not a multiple of {} = {}", heads_name, num_heads,
        kv_heads_name, num_kv_heads);
}

void normal_rows_then_nan(Tensor& x, Rng& r, int64_t groups, int64_t rows, int64_t valid_rows, int64_t width) {
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t base = g * rows * width;
    for (int64_t i = 0; i < valid_rows * width; ++i) x.set(base + i, r.normal());
    describe::poison_nan(x, base + valid_rows * width, base + rows * width);
  }
}

Magnitudes row_magnitudes(const TensorMap& in, const std::string& q, const std::string& k, const std::string& v,
                          int64_t dot_len) {
  return {magnitude::max_row_norm(in, q, dot_len), magnitude::max_row_norm(in, k, dot_len), magnitude::max_abs(in, v),
          fmt::format("max row norms of {} and {}, max|{}|", q, k, v)};
}

Magnitudes pool_magnitudes(const TensorMap& in, const std::string& q, const std::string& k, const std::string& v,
                           int64_t dot_len, const std::string& k_scales, const std::string& v_scales) {
  const double ks = k_scales.empty() ? 1.0 : magnitude::max_abs(in, k_scales);
  const double vs = v_scales.empty() ? 1.0 : magnitude::max_abs(in, v_scales);
  const std::string scaled = k_scales.empty() ? "" : fmt::format(" x max|{}|", k_scales);
  return {magnitude::max_row_norm(in, q, dot_len),
          std::sqrt(static_cast<double>(std::max<int64_t>(dot_len, 1))) * magnitude::max_abs(in, k) * ks,
          magnitude::max_abs(in, v) * vs,
          fmt::format("max row norm of {}, sqrt(head_dim) max|{}|{}, max|{}|{}", q, k, scaled, v,
                      v_scales.empty() ? "" : fmt::format(" x max|{}|", v_scales))};
}

// Scores: an F32 dot of n = dot_len products is off by at most 8 sqrt(n) u32 * sum |q_d k_d|
// (core/tolerance.h's model), and sum |q_d k_d| <= |q||k| (Cauchy-Schwarz), times |scale|; the scale
// product and the max subtraction add 2 u32 |s| with |s| <= |scale| |q||k|. |q| and |k| are the
// case's longest rows. Shifting every logit by at most ds moves each p_j by a factor within
// exp(+-2 ds), so the output (a convex combination of v rows, |v| <= the case's max|v|) moves by
// expm1(2 ds) max|v|, and never by more than 2 max|v| (two convex combinations of the same rows differ
// by at most that: logits too large for F32 to rank leave any weighting possible). exp and the normalisation add 4 u32 relative to each p_j; the p.v sum (and the
// online-softmax rescalings) over max_keys terms whose sizes sum to <= max|v| adds
// 8 sqrt(keys) u32 max|v|. p stays in F32 until the end; the output is rounded once (rtol).
LogitError logit_error(int64_t dot_len, double scale, const Magnitudes& m) {
  const double n = static_cast<double>(std::max<int64_t>(dot_len, 1));
  const double logit_max = std::fabs(scale) * m.q_norm * m.k_norm;
  return {logit_max, logit_max * (8 * std::sqrt(n) + 2) * 0x1p-24};
}

Tolerance softmax_tolerance(DType dt, int64_t dot_len, double scale, int64_t max_keys, const Magnitudes& m) {
  const double u32 = 0x1p-24;
  const double keys = static_cast<double>(std::max<int64_t>(max_keys, 1));
  const auto [logit_max, ds] = logit_error(dot_len, scale, m);
  const double atol = m.v_max * (std::min(std::expm1(2 * ds), 2.0) + (8 * std::sqrt(keys) + 4) * u32);
  return {atol, 2 * unit_roundoff(dt) + 4 * u32,
          fmt::format("softmax attention: logits <= |scale| |q| |k| = {:.3g} off by <= {:.3g} (dot of {} in F32), "
                      "{} keys, |v| <= {:.3g} ({}): |v| (min(expm1(2 ds), 2) + (8 sqrt(keys) + 4) u32) abs + 2 u_{} rel",
                      logit_max, ds, dot_len, max_keys, m.v_max, m.what, dtype_name(dt))};
}

}  // namespace ts::attn
