// Reference: the dense attention ops (TS_DENSE_ATTENTION_VIEW_OPS), each through its view
// (core/ops/core/attention_view.h), and the one softmax attention of a row (attend.h) the paged ops
// share. Plain softmax attention in double: scores, a two-pass softmax
// (max, then exp and sum), the weighted sum of values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/attend.h"

#include "core/ops/core/attention_common.h"
#include "core/ops/core/attention_view.h"
#include "core/ops/view_of.h"
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

}  // namespace

double attend_rows(const double* q, const double* k, const double* v, int64_t n, int64_t hd, double scale,
                   double* out) {
  return attend_rows(q, k, hd, 0, v, hd, n, scale, out);
}

double attend_rows(const double* q, const double* k, int64_t dk1, int64_t dk2, const double* v, int64_t dv, int64_t n,
                   double scale, double* out) {
  std::fill(out, out + dv, 0.0);
  if (n <= 0) return -std::numeric_limits<double>::infinity();
  const int64_t dk = dk1 + dk2;
  std::vector<double> p(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    // The two key parts' dots apart, then added (MLA: latent, then rope).
    double s = dot(q, k + j * dk, dk1);
    if (dk2) s += dot(q + dk1, k + j * dk + dk1, dk2);
    p[j] = scale * s;
  }
  const double lse = softmax(p);
  if (lse == -std::numeric_limits<double>::infinity()) return lse;  // every key masked: zeros
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < dv; ++d) out[d] += p[j] * v[j * dv + d];
  return lse;
}

namespace {

// The rows [0, kv) of one K or V part of sequence b, kv head kh, `width` elements each, in double.
void gather(const attn::KvRows& r, const TensorMap& t, int64_t b, int64_t kh, int64_t kv, int64_t width,
            int64_t to_width, double* to) {
  const Tensor& x = t.at(r.name(b));
  const int64_t start = r.start(b, kh);
  for (int64_t j = 0; j < kv; ++j)
    for (int64_t d = 0; d < width; ++d) to[j * to_width + d] = x.get(start + j * r.row + d);
}

// Every op of the list, through its view (core/ops/core/attention_view.h): each sequence's keys
// ([k1 | k2] rows) and values per kv head gathered once, then each query row of each head of the group
// over its visible keys.
void attention(const attn::DenseView& v, TensorMap& t) {
  const auto q = to_f64(t.at(v.q));
  const int64_t dqk = v.dqk(), dv = v.dv, group = v.group();
  std::vector<double> out(static_cast<size_t>(v.seqs * v.num_heads * v.q_len * dv));
  for (int64_t b = 0; b < v.seqs; ++b) {
    const int64_t kv = v.keys(t, b);
    std::vector<double> keys(static_cast<size_t>(kv * dqk)), values(static_cast<size_t>(kv * dv));
    for (int64_t kh = 0; kh < v.kv_heads; ++kh) {
      gather(v.k1, t, b, kh, kv, v.dk1, dqk, keys.data());
      if (v.dk2) gather(v.k2, t, b, kh, kv, v.dk2, dqk, keys.data() + v.dk1);
      gather(v.v, t, b, kh, kv, dv, dv, values.data());
      for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
        for (int64_t i = 0; i < v.q_len; ++i) {
          const int64_t row = v.row(b, h, i);
          const attn::KeyRange vis = v.visible_keys(i, kv);
          attend_rows(q.data() + row * dqk, keys.data() + vis.begin * dqk, v.dk1, v.dk2, values.data() + vis.begin * dv,
                      dv, vis.size(), v.scale, out.data() + row * dv);
        }
    }
  }
  from_f64(t.at(v.out), out);
}

template <class P> void attention(const OpRef<P>& op, const P& p, TensorMap& t) {
  attention(view_of<attn::DenseView>(op, p), t);
}

}  // namespace

// Every op of the list is its view's attention.
#define TS_REF(op) \
  void op(const std::decay_t<decltype(ops::op)>::Params& p, TensorMap& t) { attention(ops::op, p, t); }
TS_DENSE_ATTENTION_VIEW_OPS(TS_REF)
#undef TS_REF

}  // namespace ts::ref
