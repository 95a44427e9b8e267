// The paged and kv families' attention ops on the one attention engine (vulkan/attention/attention_engine.h): each op's
// attention view (its description's, core/ops/paged/attention_view.h) names its sequences (decode
// lengths, a ragged batch, FlashAttention-2's alignment, a tile list) and its pools (ferrum or vLLM
// layout through block tables; kv_dtype pools dequantized on load). Every
// sequence of a batch runs in the same dispatch (grid z); no op has its own softmax or key split:
// paged_decode_attention_v2's partitions of 512 are the engine's own key split, merged in key order.
#include <algorithm>

#include "core/ops/paged/attention_view.h"
#include "core/ops/view_of.h"
#include "vulkan/attention/attention_engine.h"

namespace ts::vk {

namespace {

// An op's attention view (its description's) as the engine's dispatch: its sequences by SeqMode, its
// pools by KvAddr, packed kv_dtype pools dequantized on load. UNIFORM: q_len positions ending at the
// parameter kv_len. A tile list of no tiles writes nothing.
std::vector<Dispatch> attend(const paged::AttentionView& v, const Target& tg) {
  const paged::PoolView& pv = v.pool;
  const paged::SeqView& s = v.seq;
  if (s.seqs == 0) return {};
  Attn a{.q = v.q, .k1 = pv.k, .k2 = pv.k, .v = pv.v, .batch = s.seqs, .nh = v.num_heads, .nkv = pv.kv_heads,
         .dqk = v.head_dim, .dk1 = v.head_dim, .dv = v.head_dim, .causal = true, .scale = v.scale};
  a.out = v.out, a.lse = v.lse;
  a.addr = pv.addr, a.tables = pv.tables, a.block_size = pv.block_size, a.width = pv.width;
  if (pv.addr == KvAddr::VLLM) a.x = pv.x;
  a.packed = pv.packed, a.kind = pv.kind, a.k_scales = pv.k_scales, a.v_scales = pv.v_scales;
  a.seqs = s.mode, a.q_len = s.q_len, a.capacity = s.capacity;
  a.kv_lens = s.lens, a.seq2 = s.second, a.tile_seqs = s.tile_seqs, a.tile_starts = s.tile_starts, a.total_q = s.total_q;
  // UNIFORM: rows at kv_len - q_len + i; an empty kv (no key for any row) at 0, as push words are unsigned.
  if (s.mode == SeqMode::UNIFORM) a.kv_len = s.kv_len, a.pos_offset = std::max<int64_t>(0, s.kv_len - s.q_len);
  return attn(tg, a, false);
}

// Head sizes the engine's build takes (attention.comp's HD_MAX); packed pools are read as 32-bit
// words, so a kv head's row must fill whole words.
Support fits(const paged::AttentionView& v) {
  if (v.pool.packed && v.head_dim % 4)
    return Support::no(fmt::format("head_dim {} is not a multiple of 4", v.head_dim));
  if (v.head_dim <= 256) return Support::yes();
  return Support::no(fmt::format("head_dim {} is above the Vulkan attention kernel's 256", v.head_dim));
}

// One registration line per op: its view is its description's.
template <class P> void add(PlannerTable& t, OpRef<P> op) {
  add_planner(
      t, op, [op](const P& p, const Decls&, const Target& tg) { return attend(view_of<paged::AttentionView>(op, p), tg); },
      [](const Problem& pr) { return fits(view_of<paged::AttentionView>(pr)); });
}

}  // namespace

void add_paged_planners(PlannerTable& t) {
  // v2's partitions of 512: the engine's own key split, merged in key order.
#define TS_ADD(op) add(t, ops::op);
  TS_ATTENTION_VIEW_OPS(TS_ADD)
#undef TS_ADD
}

}  // namespace ts::vk
