#pragma once
// Parameter structs of the core family (docs/catalog.md, "Family core"). Field names are the seed's argument
// names and the case file's metadata keys. Fields marked "inferred" are not stored in a case file:
// they come from the tensors' shapes (Op::parse with tensors) or from a preset.
#include <cstdint>

namespace ts {

struct GemmParams {
  int64_t m = 1, n = 1, k = 1;
  template <class V> void fields(V& v) { v("m", m); v("n", n); v("k", k); }
};

struct RmsNormParams {
  int64_t tokens = 1, dim = 1;
  float eps = 1e-6f;
  template <class V> void fields(V& v) { v("tokens", tokens); v("dim", dim); v("eps", eps); }
};
struct FusedAddRmsNormParams : RmsNormParams {};
struct LayerNormParams : RmsNormParams {};

struct GeluParams {
  int64_t len = 1;
  template <class V> void fields(V& v) { v("len", len); }
};
struct AddInplaceParams : GeluParams {};

struct ScaledAddInplaceParams {
  int64_t len = 1;
  float scale = 1;
  template <class V> void fields(V& v) { v("len", len); v("scale", scale); }
};

struct AddBiasParams {
  int64_t rows = 1, cols = 1;
  template <class V> void fields(V& v) { v("rows", rows); v("cols", cols); }
};

struct CopySliceParams {
  int64_t src_offset = 0, dst_offset = 0, len = 1;
  int64_t src_len = 1, dst_len = 1;  // inferred: the buffers' lengths
  template <class V> void fields(V& v) { v("src_offset", src_offset); v("dst_offset", dst_offset); v("len", len); }
};

struct EmbeddingLookupParams {
  int64_t dim = 1;
  int64_t vocab = 1, n = 1;  // inferred: table rows, number of ids
  template <class V> void fields(V& v) { v("dim", dim); }
};

struct EmbeddingLookupDevParams {
  int64_t batch = 1, dim = 1;
  int64_t vocab = 1;  // inferred: table rows
  template <class V> void fields(V& v) { v("batch", batch); v("dim", dim); }
};

struct SplitQkvParams {
  int64_t tokens = 1, q_dim = 1, kv_dim = 1;
  template <class V> void fields(V& v) { v("tokens", tokens); v("q_dim", q_dim); v("kv_dim", kv_dim); }
};

struct FusedSiluMulSplitParams {
  int64_t tokens = 1, im = 1;
  template <class V> void fields(V& v) { v("tokens", tokens); v("im", im); }
};

struct FusedSiluMulSplitStridedParams {
  int64_t in_row_offset = 0, out_row_offset = 0, tokens = 1, intermediate = 1;
  int64_t in_rows = 1, out_rows = 1;  // inferred: the buffers' row counts
  template <class V> void fields(V& v) {
    v("in_row_offset", in_row_offset); v("out_row_offset", out_row_offset);
    v("tokens", tokens); v("intermediate", intermediate);
  }
};

// RoPE tables: cos, sin [max_pos, rotary_dim/2]; rotary_dim 0 means head_dim.
struct QkNormRopeParams {
  int64_t tokens = 1, heads = 1, head_dim = 2, pos_offset = 0;
  float eps = 1e-6f;
  int64_t mode = 1;  // 0 transpose only, 1 per-head RMS norm then RoPE, 2 RoPE only
  int64_t rotary_dim = 0;
  int64_t max_pos = 1;  // inferred: cos rows
  template <class V> void fields(V& v) {
    v("tokens", tokens); v("heads", heads); v("head_dim", head_dim); v("pos_offset", pos_offset);
    v("eps", eps); v("mode", mode); v.optional("rotary_dim", rotary_dim);
  }
};

struct QkNormRopeBatchedPerItemParams {
  int64_t m = 1, heads = 1, head_dim = 2;
  float eps = 1e-6f;
  int64_t mode = 1;
  int64_t rotary_dim = 0;
  int64_t max_pos = 1;  // inferred: cos rows
  template <class V> void fields(V& v) {
    v("m", m); v("heads", heads); v("head_dim", head_dim); v("eps", eps); v("mode", mode);
    v.optional("rotary_dim", rotary_dim);
  }
};

struct SplitQkvNormRopeParams {
  int64_t tokens = 1, q_heads = 1, kv_heads = 1, head_dim = 2, pos_offset = 0;
  float eps = 1e-6f;
  int64_t qk_mode = 1;
  int64_t rotary_dim = 0;
  int64_t max_pos = 1;  // inferred: cos rows
  template <class V> void fields(V& v) {
    v("tokens", tokens); v("q_heads", q_heads); v("kv_heads", kv_heads); v("head_dim", head_dim);
    v("pos_offset", pos_offset); v("eps", eps); v("qk_mode", qk_mode); v.optional("rotary_dim", rotary_dim);
  }
};

struct SplitQkvNormRopeIntoCacheParams : SplitQkvNormRopeParams {
  int64_t cache_len = 0, cache_capacity = 1;
  template <class V> void fields(V& v) {
    SplitQkvNormRopeParams::fields(v);
    v("cache_len", cache_len); v("cache_capacity", cache_capacity);
  }
};

struct KvCacheAppendHeadMajorParams {
  int64_t cache_len = 0, cache_capacity = 1, new_tokens = 1, nkv = 1, hd = 1;
  template <class V> void fields(V& v) {
    v("cache_len", cache_len); v("cache_capacity", cache_capacity); v("new_tokens", new_tokens);
    v("nkv", nkv); v("hd", hd);
  }
};

struct TransposeParams {
  int64_t tokens = 1, heads = 1, dim = 1;
  template <class V> void fields(V& v) { v("tokens", tokens); v("heads", heads); v("dim", dim); }
};

struct FlashAttentionParams {
  int64_t batch = 1, q_len = 1, kv_len = 1, pos_offset = 0, num_heads = 1, num_kv_heads = 1, head_dim = 64;
  bool causal = false;
  float scale = 0.125f;
  int64_t kv_seq_stride = 0, sliding_window = 0;
  template <class V> void fields(V& v) {
    v("batch", batch); v("q_len", q_len); v("kv_len", kv_len); v("pos_offset", pos_offset);
    v("num_heads", num_heads); v("num_kv_heads", num_kv_heads); v("head_dim", head_dim);
    v("causal", causal); v("scale", scale); v("kv_seq_stride", kv_seq_stride);
    v("sliding_window", sliding_window);
  }
  int64_t kv_rows() const { return kv_seq_stride ? kv_seq_stride : kv_len; }  // S in docs/catalog.md
};

struct MlaAttentionParams {
  int64_t batch = 1, q_len = 1, kv_len = 1, pos_offset = 0, num_heads = 1;
  bool causal = false;
  float scale = 0.1f;
  int64_t kv_lora_rank = 1, qk_rope_head_dim = 1;
  template <class V> void fields(V& v) {
    v("batch", batch); v("q_len", q_len); v("kv_len", kv_len); v("pos_offset", pos_offset);
    v("num_heads", num_heads); v("causal", causal); v("scale", scale); v("kv_lora_rank", kv_lora_rank);
    v("qk_rope_head_dim", qk_rope_head_dim);
  }
};

struct FlashAttentionBatchedPerCacheParams {
  int64_t nq = 1, nkv = 1, hd = 1;
  float scale = 0.125f;
  int64_t capacity = 1;
  int64_t m = 1;  // inferred: number of sequences (q's first dimension)
  template <class V> void fields(V& v) {
    v("nq", nq); v("nkv", nkv); v("hd", hd); v("scale", scale); v("capacity", capacity);
  }
};

struct KvCacheAppendBatchedPerCacheParams {
  int64_t capacity = 1, m = 1, nkv = 1, hd = 1;
  template <class V> void fields(V& v) { v("capacity", capacity); v("m", m); v("nkv", nkv); v("hd", hd); }
};

struct ArgmaxRowsParams {
  int64_t m = 1, n = 1;
  template <class V> void fields(V& v) { v("m", m); v("n", n); }
};

}  // namespace ts
