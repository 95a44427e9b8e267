// The paged and kv families' attention ops on OpenCL: each is an item view (its query rows, found on
// the device from the lengths, which the plan never reads) and a paged K/V view handed to the one
// attention engine (attention_engine.h), so decode batches, prefills and ragged batches are one
// dispatch each (plus the key split's combine) and no op has its own softmax, GQA sharing or key split.
#include <algorithm>

#include "attention_engine.h"
#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged/attention_common.h"
#include "core/ops/paged_params.h"

namespace ts::ocl {
namespace {

// A pool's view: a kv head's rows start block_size * head_dim into a block, in either layout.
struct PoolView {
  Paging paging;
  Strides head;
};
PoolView pool_view(const PagedPoolParams& p, bool vllm, const char* tables) {
  PoolView v;
  v.paging.tables = tables;
  v.paging.table_width = p.max_num_blocks_per_seq;
  v.paging.block_size = p.block_size;
  v.paging.k_block = v.paging.v_block = p.num_kv_heads * p.block_size * p.head_dim;
  v.paging.num_blocks = p.num_blocks;
  v.paging.vllm = vllm;
  v.paging.x = vllm ? p.x : 0;
  v.head = {0, p.block_size * p.head_dim, 0};
  return v;
}

// Every paged op is causal attention of q over the pools into out, through its items.
void attend(Planner& pl, const PagedPoolParams& p, const PoolView& pv, const Items& items, float scale,
            const char* q = "q", const char* k = "k_pool", const char* v = "v_pool", const char* out = "out",
            std::string lse = "", int64_t piece = -1) {
  flash(pl, {.q = q, .k1 = k, .k2 = k, .v = v, .out = out, .kv_lens = "", .batch = 0, .nh = p.num_heads,
             .nkv = p.num_kv_heads, .q_len = 0, .kv_len = 0, .pos_offset = 0, .causal = true, .window = 0,
             .scale = scale, .dk1 = p.head_dim, .dk2 = 0, .dv = p.head_dim, .s1 = pv.head, .s2 = pv.head,
             .sv = pv.head, .items = &items, .paging = &pv.paging, .lse = std::move(lse), .piece = piece});
}

// Decode (q [S, nh, hd], sequence s seeing [0, lens[s])) or one sequence's causal prefill (q [nh,
// q_len, hd], row i seeing [0, lens[0] - q_len + 1 + i)), in runs of positions that fill a row block.
// The lengths stay on the device: `capacity` (the most keys a sequence may have, a parameter) sizes
// the key split, and a piece past a shorter sequence's keys loads nothing.
Items decode_items(const Planner& pl, const PagedPoolParams& p, int64_t num_seqs, int64_t q_len, const char* lens,
                   int64_t capacity) {
  Items it;
  it.mode = SeqMode::LENS, it.lens = lens, it.seqs = num_seqs, it.q_len = q_len, it.capacity = capacity;
  if (q_len == 1) {
    it.run = 1, it.head_rows = 1, it.pos_rows = p.num_heads, it.seq_rows = p.num_heads;
  } else {
    it.run = item_positions(pl, p.num_heads / p.num_kv_heads, p.head_dim);
    it.head_rows = q_len, it.pos_rows = 1, it.seq_rows = 0;  // one sequence
  }
  it.out_rows = num_seqs * p.num_heads * q_len;
  return it;
}

// A ragged batch (token-major rows): sequence s owns rows cu[s] .. cu[s+1], its row i at position
// first + i of a kv of length kv (paged::seq_span), cut into runs of positions. Tiles: one item per
// tile (up to 4 rows of its sequence from tile_starts[t]).
Items varlen_items(const Planner& pl, const PagedPoolParams& p, SeqMode mode, int64_t seqs, int64_t total_q,
                   int64_t max_kv_len) {
  Items it;
  it.mode = mode, it.lens = "cu_seqlens_q", it.second = mode == SeqMode::FA2 ? "seq_lens" : "pos_offsets";
  it.seqs = seqs, it.total_q = total_q, it.capacity = max_kv_len;
  it.run = mode == SeqMode::TILES ? 4 : item_positions(pl, p.num_heads / p.num_kv_heads, p.head_dim);
  if (mode == SeqMode::TILES) it.tile_seqs = "tile_seqs", it.tile_starts = "tile_starts";
  it.head_rows = 1, it.pos_rows = p.num_heads, it.out_rows = total_q * p.num_heads;
  return it;
}

template <class P>
void plan_decode(Planner& pl, bool vllm, int64_t q_len, const char* lens, int64_t capacity, int64_t piece = -1) {
  const auto& p = pl.params<P>();
  const Items items = decode_items(pl, p, p.num_seqs, q_len, lens, capacity);
  attend(pl, p, pool_view(p, vllm, "block_tables"), items, p.softmax_scale(), "q", "k_pool", "v_pool", "out", "",
         piece);
}

template <class P> void plan_varlen(Planner& pl, bool vllm, bool fa2) {
  const auto& p = pl.params<P>();
  attend(pl, p, pool_view(p, vllm, "block_tables"),
         varlen_items(pl, p, fa2 ? SeqMode::FA2 : SeqMode::VARLEN, p.num_seqs, p.total_q_tokens, p.max_kv_len),
         p.softmax_scale(), "q", "k_pool", "v_pool", "out", fa2 ? "lse" : "");
}

// vLLM v2's partitions: 512 keys each, merged in key order.
constexpr int64_t kV2Partition = 512;

}  // namespace

void add_paged_attention_ops(PlanTable& t) {
  // paged_decode_attention names no longest context: a sequence may fill its table.
  add_plan(t, ops::paged_decode_attention, [](Planner& pl) {
    const auto& p = pl.params<PagedDecodeParams>();
    plan_decode<PagedDecodeParams>(pl, false, p.q_len, "context_lens", p.max_num_blocks_per_seq * p.block_size);
  });
  add_plan(t, ops::paged_varlen_attention_vllm_layout, [](Planner& pl) {
    const auto& p = pl.params<PagedDecodeParams>();
    plan_decode<PagedDecodeParams>(pl, true, p.q_len, "context_lens", p.max_num_blocks_per_seq * p.block_size);
  });
  add_plan(t, ops::paged_decode_attention_v2, [](Planner& pl) {
    plan_decode<PagedDecodeV2Params>(pl, false, 1, "context_lens", pl.params<PagedDecodeV2Params>().max_seq_len,
                                     kV2Partition);
  });
  add_plan(t, ops::paged_batched_decode_attention, [](Planner& pl) {
    plan_decode<PagedBatchedDecodeParams>(pl, false, 1, "valid_kv_lens",
                                          pl.params<PagedBatchedDecodeParams>().max_kv_len);
  });
  add_plan(t, ops::paged_varlen_attention, [](Planner& pl) { plan_varlen<PagedVarlenParams>(pl, false, false); });
  add_plan(t, ops::paged_varlen_attention_vllm, [](Planner& pl) { plan_varlen<PagedVarlenParams>(pl, true, false); });
  add_plan(t, ops::paged_varlen_attention_fa2_ffi,
           [](Planner& pl) { plan_varlen<PagedVarlenParams>(pl, false, true); });
  add_plan(t, ops::paged_varlen_attention_vllm_tiled_q4, [](Planner& pl) {
    const auto& p = pl.params<PagedVarlenTiledParams>();
    attend(pl, p, pool_view(p, true, "block_tables"),
           varlen_items(pl, p, SeqMode::TILES, p.num_tiles, p.total_q_tokens, p.max_kv_len), p.softmax_scale());
  });
  add_plan(t, ops::kv_paged_decode_attention, [](Planner& pl) {
    const auto& p = pl.params<KvPagedDecodeParams>();
    PagedPoolParams pool;
    pool.num_heads = p.num_q_heads, pool.num_kv_heads = p.num_kv_heads, pool.head_dim = p.head_dim;
    pool.block_size = p.block_size, pool.max_num_blocks_per_seq = p.num_table, pool.num_blocks = p.num_blocks;
    PoolView pv = pool_view(pool, false, "block_table");
    pv.paging.any_dtype = true;
    pv.paging.kv_dtype = p.kv_dtype;
    if (has_scales(p.kv_dtype)) pv.paging.k_scales = "layer_k_scales", pv.paging.v_scales = "layer_v_scales";
    // One sequence, its length a parameter: the last of valid_kv_len positions, q [nh, hd].
    flash(pl, {.q = "q", .k1 = "layer_k", .k2 = "layer_k", .v = "layer_v", .out = "output", .kv_lens = "",
               .batch = 1, .nh = p.num_q_heads, .nkv = p.num_kv_heads, .q_len = 1, .kv_len = p.valid_kv_len,
               .pos_offset = p.valid_kv_len - 1, .causal = true, .window = 0, .scale = p.scale, .dk1 = p.head_dim,
               .dk2 = 0, .dv = p.head_dim, .s1 = pv.head, .s2 = pv.head, .sv = pv.head, .paging = &pv.paging});
  });
}

}  // namespace ts::ocl
