#pragma once
// Parameter structs of the moe family (docs/catalog.md, "Family moe"). Field names are the seed's argument
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

// expert GEMV / GEMM. Every op reading stacked expert weights [num_experts, n_rows, n_cols] takes the
// seed's load_quant_experts parameters: kind (a GGUF kind: U8 [E, n_rows, row_bytes]; or F32 / F16 /
// BF16: plain weights in the case dtype), num_experts, n_rows, n_cols. Offsets and strides count
// elements; inferred fields are the lengths of flat buffers, which offsets and strides must stay in.
struct MoeExperts {
  QuantKind kind = QuantKind::Q4_0;
  int64_t num_experts = 1, n_rows = 1, n_cols = 32;
  template <class V> void fields(V& v) {
    v("kind", kind); v("num_experts", num_experts); v("n_rows", n_rows); v("n_cols", n_cols);
  }
};

// gemv_quant_moe_id: out[i, :] = a[i*src1_stride ..] @ dequant(weights[ids[i]])^T, i < n_selected
// (src1_stride 0: every pair reads the same row).
struct GemvQuantMoeIdParams {
  MoeExperts w;
  int64_t n_selected = 1, src1_stride = 0;
  int64_t a_len = 32;  // inferred: a's length
  template <class V> void fields(V& v) { w.fields(v); v("n_selected", n_selected); v("src1_stride", src1_stride); }
};

// gemv_quant_moe_id_offset: as gemv_quant_moe_id, a read from a_offset and ids from ids_offset.
struct GemvQuantMoeIdOffsetParams {
  MoeExperts w;
  int64_t a_offset = 0, ids_offset = 0, n_selected = 1, src1_stride = 0;
  int64_t a_len = 32, ids_len = 1;  // inferred: a's and ids' lengths
  template <class V> void fields(V& v) {
    w.fields(v); v("a_offset", a_offset); v("ids_offset", ids_offset); v("n_selected", n_selected);
    v("src1_stride", src1_stride);
  }
};

// gemv_quant_moe_id_batched and gemv_quant_moe_id_gate_up_silu_batched: m * top_k pairs, pair p reads
// a[(p / top_k) * src1_outer_stride + (p % top_k) * src1_inner_stride ..].
struct GemvQuantMoeIdBatchedParams {
  MoeExperts w;
  int64_t m = 1, top_k = 1, src1_outer_stride = 32, src1_inner_stride = 0;
  int64_t a_len = 32;  // inferred: a's length
  template <class V> void fields(V& v) {
    w.fields(v); v("m", m); v("top_k", top_k); v("src1_outer_stride", src1_outer_stride);
    v("src1_inner_stride", src1_inner_stride);
  }
};

// gemv_quant_moe_id_gate_up_silu: silu_out[i, :] = silu(a @ gate_w[ids[i]]^T) * (a @ up_w[ids[i]]^T),
// one activation row a [n_cols] broadcast to every pair; gate and up share one kind.
struct GemvQuantMoeIdGateUpSiluParams {
  MoeExperts w;
  int64_t n_selected = 1;
  template <class V> void fields(V& v) { w.fields(v); v("n_selected", n_selected); }
};

// gemm_quant_moe_id and gemm_quant_moe_id_indirect: ids [num_experts, max_per_expert] lists the pair ids
// t * top_k + s routed to each expert, the first tpe[e] of row e valid; out [batch, top_k, n_rows].
struct GemmQuantMoeIdParams {
  MoeExperts w;
  int64_t ne11 = 1, top_k = 1, max_per_expert = 1, batch = 1;
  template <class V> void fields(V& v) {
    w.fields(v); v("ne11", ne11); v("top_k", top_k); v("max_per_expert", max_per_expert); v("batch", batch);
  }
};

}  // namespace ts
