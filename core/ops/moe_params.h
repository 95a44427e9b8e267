#pragma once
// Parameter structs of the moe family (OPS.md, "Family moe"). Field names are the seed's argument
// names and the case file's metadata keys.
#include <cstdint>

#include "core/kinds.h"

namespace ts {

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
