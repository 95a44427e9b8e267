// The paged and kv families' attention ops on OpenCL: each op's attention view (its description's:
// core/ops/paged/attention_view.h) becomes the engine's items (its query rows, found on the device
// from the lengths, which the plan never reads) and paging, handed to the one attention engine
// (attention_engine.h), so decode batches, prefills and ragged batches are one
// dispatch each (plus the key split's combine) and no op has its own softmax, GQA sharing or key split.
#include <algorithm>

#include "core/ops/paged/attention_view.h"
#include "core/ops/view_of.h"
#include "opencl/attention/attention_engine.h"

namespace ts::ocl {
namespace {

// The view's pools as the engine's paging: a kv head's rows start block_size * head_dim into a block,
// in either layout.
Paging paging(const paged::PoolView& pv) {
  Paging pg;
  pg.tables = pv.tables, pg.table_width = pv.width, pg.block_size = pv.block_size;
  pg.k_block = pg.v_block = pv.kv_heads * pv.block_size * pv.head_dim;
  pg.num_blocks = pv.num_blocks;
  pg.vllm = pv.addr == KvAddr::VLLM, pg.x = pg.vllm ? pv.x : 0;
  pg.any_dtype = pv.packed, pg.kv_dtype = pv.kind, pg.k_scales = pv.k_scales, pg.v_scales = pv.v_scales;
  return pg;
}

// The view's sequences as the engine's items, in runs of positions that fill a row block (a tile: its
// up to 4 rows). The lengths stay on the device: `capacity` (the most keys a sequence may have, a
// parameter) sizes the key split, and a piece past a shorter sequence's keys loads nothing.
Items items(const Planner& pl, const paged::AttentionView& v) {
  const paged::SeqView& s = v.seq;
  const int64_t group = v.num_heads / v.pool.kv_heads;
  Items it;
  it.mode = s.mode, it.lens = s.lens, it.second = s.second, it.tile_seqs = s.tile_seqs, it.tile_starts = s.tile_starts;
  it.seqs = s.seqs, it.capacity = s.capacity;
  if (s.mode == SeqMode::LENS) {
    it.q_len = s.q_len;
    if (s.head_major) {  // one sequence's prefill, q [nh, q_len, hd]
      it.run = item_positions(pl, group, v.head_dim), it.head_rows = s.q_len, it.pos_rows = 1, it.seq_rows = 0;
    } else {
      it.run = 1, it.head_rows = 1, it.pos_rows = v.num_heads, it.seq_rows = v.num_heads;
    }
    it.out_rows = s.seqs * v.num_heads * s.q_len;
  } else {  // token-major ragged rows
    it.total_q = s.total_q;
    it.run = s.mode == SeqMode::TILES ? s.q_len : item_positions(pl, group, v.head_dim);
    it.head_rows = 1, it.pos_rows = v.num_heads, it.out_rows = s.total_q * v.num_heads;
  }
  return it;
}

// Every attention op of the two families: causal attention of q over its pools through its view
// (core/ops/paged/attention_view.h), one dispatch (plus the key split's combine). UNIFORM (one
// sequence, its length a parameter) needs no items: q_len positions ending at kv_len.
void attend(Planner& pl, const paged::AttentionView& v) {
  const paged::PoolView& pv = v.pool;
  const Paging pg = paging(pv);
  const Strides head{0, pv.block_size * pv.head_dim, 0};
  const bool uniform = v.seq.mode == SeqMode::UNIFORM;
  const Items it = uniform ? Items{} : items(pl, v);
  flash(pl, {.q = v.q, .k1 = pv.k, .k2 = pv.k, .v = pv.v, .out = v.out, .kv_lens = "",
             .batch = uniform ? v.seq.seqs : 0, .nh = v.num_heads, .nkv = pv.kv_heads, .q_len = uniform ? v.seq.q_len : 0,
             .kv_len = uniform ? v.seq.kv_len : 0, .pos_offset = uniform ? v.seq.kv_len - v.seq.q_len : 0,
             .causal = true, .window = 0, .scale = v.scale, .dk1 = v.head_dim, .dk2 = 0, .dv = v.head_dim, .s1 = head,
             .s2 = head, .sv = head, .items = uniform ? nullptr : &it, .paging = &pg, .lse = v.lse,
             .piece = v.key_partition > 0 ? v.key_partition : -1});
}

// One registration line per op: its view is its description's.
template <class P> void add(PlanTable& t, OpRef<P> op) {
  add_plan(t, op, [op](Planner& pl) { attend(pl, view_of<paged::AttentionView>(op, pl.params<P>())); });
}

}  // namespace

void add_paged_attention_ops(PlanTable& t) {
#define TS_ADD(op) add(t, ops::op);
  TS_ATTENTION_VIEW_OPS(TS_ADD)
#undef TS_ADD
}

}  // namespace ts::ocl
