// Reference: the MoE combine ops (silu_mul_stacked / _batched and the weighted sums).
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/reference.h"

namespace ts::ref {
namespace {

void silu_mul_rows(int64_t rows, int64_t ffn, TensorMap& t) {
  const auto gate = to_f64(t.at("gate")), up = to_f64(t.at("up"));
  Tensor& out = t.at("out");
  for (int64_t i = 0; i < rows * ffn; ++i) out.set(i, gate[i] / (1.0 + std::exp(-gate[i])) * up[i]);
}

// out[out_offset + b*hidden + h] = sum_k weights[weights_offset + b*top_k + k] * slots[b, k, h], summed in
// double and rounded once; `add` adds the sum to out's value (the residual forms) before that rounding.
void combine(const TensorMap& t, Tensor& out, int64_t batch, int64_t top_k, int64_t hidden, int64_t weights_offset,
             int64_t out_offset, bool add) {
  const auto slots = to_f64(t.at("slots")), weights = to_f64(t.at("weights"));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hidden; ++h) {
      double sum = 0;
      for (int64_t k = 0; k < top_k; ++k)
        sum += weights[weights_offset + b * top_k + k] * slots[(b * top_k + k) * hidden + h];
      const int64_t at = out_offset + b * hidden + h;
      out.set(at, add ? out.get(at) + sum : sum);
    }
}

}  // namespace

void silu_mul_stacked(const SiluMulStackedParams& p, TensorMap& t) { silu_mul_rows(p.n_slots, p.ffn, t); }

void silu_mul_batched(const SiluMulBatchedParams& p, TensorMap& t) { silu_mul_rows(p.total_pairs, p.ffn, t); }

void weighted_sum_stacked(const WeightedSumStackedParams& p, TensorMap& t) {
  combine(t, t.at("out"), 1, p.n_slots, p.hidden, 0, 0, false);
}

void weighted_sum_residual_stacked(const WeightedSumStackedParams& p, TensorMap& t) {
  combine(t, t.at("residual"), 1, p.n_slots, p.hidden, 0, 0, true);
}

// Exactly its chain: weighted_sum_residual_stacked, then rms_norm of the residual as stored (rounded to
// the case dtype, what the next layer reads back) with next_norm_w.
void weighted_sum_residual_norm_stacked(const WeightedSumResidualNormParams& p, TensorMap& t) {
  weighted_sum_residual_stacked({p.n_slots, p.hidden}, t);
  TensorMap norm;
  norm.emplace("x", t.at("residual"));
  norm.emplace("w", t.at("next_norm_w"));
  norm.emplace("out", std::move(t.at("normed_out")));
  rms_norm({1, p.hidden, p.eps}, norm);
  t.at("normed_out") = std::move(norm.at("out"));
}

void weighted_sum_batched(const WeightedSumBatchedParams& p, TensorMap& t) {
  combine(t, t.at("out"), p.batch, p.top_k, p.hidden, 0, 0, false);
}

void weighted_sum_batched_offset(const WeightedSumBatchedOffsetParams& p, TensorMap& t) {
  // Only the window is written; the rest of out keeps its values (it is in-out).
  combine(t, t.at("out"), p.batch, p.top_k, p.hidden, p.weights_offset, p.out_offset, false);
}

}  // namespace ts::ref
