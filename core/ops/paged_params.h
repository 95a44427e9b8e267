#pragma once
// Parameter structs of the paged and kv families (docs/catalog.md, "Family paged", "Family kv"). Field names
// are the seed's argument names and the case file's metadata keys. `num_blocks` (the pools' first
// dimension) is inferred from the tensors, never stored.
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/kinds.h"
#include "core/ops/core_params.h"

namespace ts {

// The softmax scale of the paged attention ops: an optional parameter, 0 meaning 1/sqrt(head_dim).
inline float paged_scale(float scale, int64_t head_dim) {
  return scale != 0.0f ? scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

// What every paged attention op shares: the heads and the pool's geometry. `x` is vLLM's key-cache
// interleave (16 bytes of elements: 4 for F32, 8 for F16 / BF16), used by the _vllm ops only.
struct PagedPoolParams {
  int64_t num_heads = 1, num_kv_heads = 1, head_dim = 64, block_size = 16, max_num_blocks_per_seq = 1;
  float scale = 0;
  int64_t x = 0;
  int64_t num_blocks = 1;  // inferred: the pools' first dimension
  // For the generator of a preset only (a case file carries the tensors themselves): each sequence's
  // kv length (decode), or its query rows and its pos_offsets / seq_lens (varlen).
  std::vector<int64_t> gen_lens, gen_pos;
  template <class V> void pool_fields(V& v) {
    v("num_heads", num_heads); v("num_kv_heads", num_kv_heads); v("head_dim", head_dim);
    v("block_size", block_size); v("max_num_blocks_per_seq", max_num_blocks_per_seq);
    v.optional("scale", scale); v.optional("x", x);
  }
  float softmax_scale() const { return paged_scale(scale, head_dim); }
};

// paged_decode_attention and paged_varlen_attention_vllm_layout: decode (q_len 1, q and out
// [num_seqs, num_heads, head_dim]) or one sequence's causal prefill (q_len > 1, [num_heads, q_len,
// head_dim]) over block_tables [num_seqs, max_num_blocks_per_seq] and context_lens [num_seqs].
struct PagedDecodeParams : PagedPoolParams {
  int64_t num_seqs = 1, q_len = 1;
  template <class V> void fields(V& v) { v("num_seqs", num_seqs); pool_fields(v); v("q_len", q_len); }
};

// paged_decode_attention_v2: decode only, keys split into partitions of 512 and reduced.
struct PagedDecodeV2Params : PagedPoolParams {
  int64_t num_seqs = 1, max_seq_len = 1;
  template <class V> void fields(V& v) { v("num_seqs", num_seqs); pool_fields(v); v("max_seq_len", max_seq_len); }
};

// paged_varlen_attention (+ _vllm) and _fa2_ffi: a ragged batch of num_seqs sequences, total_q_tokens
// query rows; every kv length at most max_kv_len. max_q_len: _fa2_ffi only.
struct PagedVarlenParams : PagedPoolParams {
  int64_t num_seqs = 1, total_q_tokens = 1, max_kv_len = 1, max_q_len = 0;
  template <class V> void fields(V& v) {
    v("num_seqs", num_seqs); v("total_q_tokens", total_q_tokens); v("max_kv_len", max_kv_len);
    v.optional("max_q_len", max_q_len); pool_fields(v);
  }
};

// paged_varlen_attention_vllm_tiled_q4: the ragged batch cut into num_tiles tiles of up to 4 query
// rows, tile t being rows tile_starts[t] .. of sequence tile_seqs[t].
struct PagedVarlenTiledParams : PagedPoolParams {
  int64_t num_tiles = 1, max_kv_len = 1;
  int64_t num_seqs = 1, total_q_tokens = 1;  // inferred: cu_seqlens_q and q
  template <class V> void fields(V& v) { v("num_tiles", num_tiles); v("max_kv_len", max_kv_len); pool_fields(v); }
};

// paged_batched_decode_attention: one query token per sequence, kv lengths valid_kv_lens.
struct PagedBatchedDecodeParams : PagedPoolParams {
  int64_t num_seqs = 1, max_kv_len = 1;
  template <class V> void fields(V& v) { v("num_seqs", num_seqs); v("max_kv_len", max_kv_len); pool_fields(v); }
};

// split_qkv_norm_rope_into_paged_cache (+ _vllm): split_qkv_norm_rope of one sequence whose k, v land
// in the pools at slots cache_len + t. qkv and q_out are flat buffers of qkv_elems / q_out_elems
// elements (inferred), the op's data starting qkv_byte_offset / q_out_byte_offset bytes in.
struct PagedSplitParams : SplitQkvNormRopeParams {
  int64_t qkv_byte_offset = 0, q_out_byte_offset = 0, cache_len = 0, block_size = 16, max_num_blocks_per_seq = 1;
  int64_t x = 0;
  int64_t num_blocks = 1, qkv_elems = 1, q_out_elems = 1;  // inferred
  template <class V> void fields(V& v) {
    SplitQkvNormRopeParams::fields(v);
    v("qkv_byte_offset", qkv_byte_offset); v("q_out_byte_offset", q_out_byte_offset); v("cache_len", cache_len);
    v("block_size", block_size); v("max_num_blocks_per_seq", max_num_blocks_per_seq); v.optional("x", x);
  }
};

// split_qkv_norm_rope_into_paged_cache_varlen (+ _vllm): m_total rows of num_seqs sequences, row i of
// sequence s at position pos_offsets[s] + i (its RoPE position and its pool slot).
struct PagedSplitVarlenParams {
  int64_t num_seqs = 1, m_total = 1, q_heads = 1, kv_heads = 1, head_dim = 64;
  float eps = 1e-6f;
  int64_t qk_mode = 1, block_size = 16, max_blocks_per_seq = 1, rotary_dim = 0, x = 0;
  int64_t max_pos = 1, num_blocks = 1;  // inferred: cos rows, pool blocks
  std::vector<int64_t> gen_lens, gen_pos;  // generator only: rows and pos_offsets per sequence
  template <class V> void fields(V& v) {
    v("num_seqs", num_seqs); v("m_total", m_total); v("q_heads", q_heads); v("kv_heads", kv_heads);
    v("head_dim", head_dim); v("eps", eps); v("qk_mode", qk_mode); v("block_size", block_size);
    v("max_blocks_per_seq", max_blocks_per_seq); v.optional("rotary_dim", rotary_dim); v.optional("x", x);
  }
};

// kv_append_paged: tokens rows of k_in, v_in (F32 [tokens, num_kv_heads, head_dim]) quantized (or
// converted) into the pools at positions cache_len_before + t, through paged_block_indices.
struct KvAppendPagedParams {
  KvDtype kv_dtype = KvDtype::I8;
  int64_t cache_len_before = 0, tokens = 1, block_size = 16, num_kv_heads = 1, head_dim = 64;
  int64_t num_blocks = 1, num_indices = 1;  // inferred: pool blocks, paged_block_indices' length
  template <class V> void fields(V& v) {
    v("kv_dtype", kv_dtype); v("cache_len_before", cache_len_before); v("tokens", tokens);
    v("block_size", block_size); v("num_kv_heads", num_kv_heads); v("head_dim", head_dim);
  }
};

// kv_paged_decode_attention: one decode step of num_q_heads query heads over valid_kv_len positions of
// a pool of kv_dtype, dequantized on the fly.
struct KvPagedDecodeParams {
  KvDtype kv_dtype = KvDtype::I8;
  int64_t num_q_heads = 1, num_kv_heads = 1, head_dim = 64, valid_kv_len = 1, block_size = 16;
  float scale = 0.125f;
  int64_t num_blocks = 1, num_table = 1;  // inferred: pool blocks, block_table's length
  template <class V> void fields(V& v) {
    v("kv_dtype", kv_dtype); v("num_q_heads", num_q_heads); v("num_kv_heads", num_kv_heads);
    v("head_dim", head_dim); v("valid_kv_len", valid_kv_len); v("block_size", block_size); v("scale", scale);
  }
};

}  // namespace ts
