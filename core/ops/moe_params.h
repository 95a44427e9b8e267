#pragma once
// Parameter structs of the moe family (OPS.md, "Family moe"). Field names are the seed's argument
// names and the case file's metadata keys.
#include <cstdint>

#include "core/kinds.h"

namespace ts {

// route_topk_softmax: logits [batch, num_experts] -> out_ids I32 [batch, top_k], out_weights F32.
struct RouteTopkSoftmaxParams {
  int64_t batch = 1, num_experts = 8, top_k = 2;
  bool norm_topk_prob = true;
  template <class V> void fields(V& v) {
    v("batch", batch); v("num_experts", num_experts); v("top_k", top_k); v("norm_topk_prob", norm_topk_prob);
  }
};

// compute_ids_tpe: selected_ids I32 [batch, top_k] -> tpe I32 [E], ids I32 [E, batch*top_k].
struct ComputeIdsTpeParams {
  int64_t batch = 1, num_experts = 8, top_k = 2;
  template <class V> void fields(V& v) { v("batch", batch); v("num_experts", num_experts); v("top_k", top_k); }
};

// moe_align_block_size: topk_ids I32 [batch, top_k] -> sorted_token_ids, expert_ids, num_tokens_post_padded.
struct MoeAlignBlockSizeParams {
  int64_t num_experts = 8, block_size = 16;
  int64_t batch = 1, top_k = 2;  // inferred: topk_ids' shape
  template <class V> void fields(V& v) { v("num_experts", num_experts); v("block_size", block_size); }
};

// silu_mul_stacked: gate, up [n_slots, ffn] -> out.
struct SiluMulStackedParams {
  int64_t n_slots = 1, ffn = 1;
  template <class V> void fields(V& v) { v("n_slots", n_slots); v("ffn", ffn); }
};

// silu_mul_batched: gate, up [total_pairs, ffn] -> out.
struct SiluMulBatchedParams {
  int64_t total_pairs = 1, ffn = 1;
  template <class V> void fields(V& v) { v("total_pairs", total_pairs); v("ffn", ffn); }
};

// weighted_sum_stacked and weighted_sum_residual_stacked: slots [n_slots, hidden], weights F32 [n_slots].
struct WeightedSumStackedParams {
  int64_t n_slots = 1, hidden = 1;
  template <class V> void fields(V& v) { v("n_slots", n_slots); v("hidden", hidden); }
};

// weighted_sum_residual_norm_stacked: as above, then normed_out = rms_norm(residual, eps) * next_norm_w.
struct WeightedSumResidualNormParams {
  int64_t n_slots = 1, hidden = 1;
  float eps = 1e-6f;
  template <class V> void fields(V& v) { v("n_slots", n_slots); v("hidden", hidden); v("eps", eps); }
};

// weighted_sum_batched: slots [batch, top_k, hidden], weights F32 [batch, top_k] -> out [batch, hidden].
struct WeightedSumBatchedParams {
  int64_t batch = 1, top_k = 1, hidden = 1;
  template <class V> void fields(V& v) { v("batch", batch); v("top_k", top_k); v("hidden", hidden); }
};

// weighted_sum_batched_offset: as weighted_sum_batched, with weights read from element weights_offset of
// a 1-D weights buffer and out (in-out, 1-D) written from element out_offset.
struct WeightedSumBatchedOffsetParams {
  int64_t batch = 1, top_k = 1, hidden = 1, weights_offset = 0, out_offset = 0;
  int64_t weights_len = 1, out_len = 1;  // inferred: the buffers' lengths
  template <class V> void fields(V& v) {
    v("batch", batch); v("top_k", top_k); v("hidden", hidden); v("weights_offset", weights_offset);
    v("out_offset", out_offset);
  }
};

}  // namespace ts
