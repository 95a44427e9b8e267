#include "core/ops/paged/attention_view.h"


namespace ts::paged {

namespace {

PoolView pool_view(const PagedPoolParams& p, Layout layout) {
  PoolView v;
  v.addr = layout == Layout::Vllm ? KvAddr::VLLM : KvAddr::FERRUM;
  v.kv_heads = p.num_kv_heads, v.head_dim = p.head_dim, v.block_size = p.block_size;
  v.width = p.max_num_blocks_per_seq, v.num_blocks = p.num_blocks;
  v.x = layout == Layout::Vllm ? p.x : 1;
  return v;
}

AttentionView pooled(const PagedPoolParams& p, Layout layout) {
  AttentionView v;
  v.num_heads = p.num_heads, v.head_dim = p.head_dim, v.scale = p.softmax_scale();
  v.pool = pool_view(p, layout);
  return v;
}

}  // namespace

AttentionView decode_view(const PagedPoolParams& p, Layout layout, int64_t seqs, int64_t q_len, const char* lens,
                          int64_t capacity) {
  AttentionView v = pooled(p, layout);
  v.seq.mode = SeqMode::LENS, v.seq.seqs = seqs, v.seq.q_len = q_len, v.seq.lens = lens, v.seq.capacity = capacity;
  v.seq.head_major = q_len > 1;  // one sequence's prefill: q [heads, q_len, head_dim]
  return v;
}

AttentionView varlen_view(const PagedPoolParams& p, Layout layout, bool fa2, int64_t seqs, int64_t total_q,
                          int64_t max_kv_len) {
  AttentionView v = pooled(p, layout);
  v.seq.mode = fa2 ? SeqMode::FA2 : SeqMode::VARLEN, v.seq.seqs = seqs, v.seq.q_len = 0, v.seq.total_q = total_q;
  v.seq.capacity = max_kv_len, v.seq.lens = "cu_seqlens_q", v.seq.second = fa2 ? "seq_lens" : "pos_offsets";
  if (fa2) v.lse = "lse";
  return v;
}

AttentionView tiles_view(const PagedVarlenTiledParams& p) {
  AttentionView v = varlen_view(p, Layout::Vllm, false, p.num_tiles, p.total_q_tokens, p.max_kv_len);
  v.seq.mode = SeqMode::TILES, v.seq.q_len = 4, v.seq.tile_seqs = "tile_seqs", v.seq.tile_starts = "tile_starts";
  return v;
}

AttentionView kv_decode_view(const KvPagedDecodeParams& p) {
  AttentionView v;
  v.q = "q", v.out = "output";
  v.num_heads = p.num_q_heads, v.head_dim = p.head_dim, v.scale = p.scale;
  v.seq.mode = SeqMode::UNIFORM, v.seq.seqs = 1, v.seq.q_len = 1, v.seq.kv_len = p.valid_kv_len;
  v.seq.capacity = p.valid_kv_len;
  PoolView& pv = v.pool;
  pv.k = "layer_k", pv.v = "layer_v", pv.tables = "block_table";
  pv.kv_heads = p.num_kv_heads, pv.head_dim = p.head_dim, pv.block_size = p.block_size;
  pv.width = p.num_table, pv.num_blocks = p.num_blocks;
  pv.packed = true, pv.kind = p.kv_dtype;
  if (has_scales(p.kv_dtype)) pv.k_scales = "layer_k_scales", pv.v_scales = "layer_v_scales";
  return v;
}

}  // namespace ts::paged
