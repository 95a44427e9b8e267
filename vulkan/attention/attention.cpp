// The dense attention ops (TS_DENSE_ATTENTION_VIEW_OPS) on the attention engine
// (vulkan/attention/attention_engine.h), each through its view (core/ops/core/attention_view.h).
// attention.comp reads affine K/V rows where they lie (its row strides k1_rs / v_rs) and q / out
// head- or token-major (q_tm), so token-major tensors (gqa_attention's) need no copy.
#include <string>
#include <vector>

#include "core/ops/core/attention_view.h"
#include "core/ops/view_of.h"
#include "core/unsupported.h"
#include "vulkan/attention/attention_engine.h"

namespace ts::vk {
namespace {

// attention.comp finds the rows of (sequence z, kv head h) of a dispatch at (z * nkv + h) * hs: one
// stride for both, which a view's part gives when its sequences follow each other's heads (or when
// either index is always 0).
int64_t slot_stride(const attn::DenseView& v, const attn::KvRows& r, int64_t batch) {
  if (v.kv_heads == 1) return batch == 1 ? 0 : r.seq;
  supported_only_if(batch == 1 || r.seq == v.kv_heads * r.head,
                    "vulkan attention: {}'s sequences are {} elements apart, not nkv x its head stride {}", r.tensor,
                    r.seq, r.head);
  return r.head;
}

// One dispatch (plus the key split's combine) for the whole batch; per-sequence tensors or lengths
// (flash_attention_batched_per_cache) take one per sequence, each over its own buffers, reading its
// length on the device (its pieces cover kv_len, the most keys). A split key (MLA) takes the MLA build
// (head dims up to 576).
std::vector<Dispatch> attend(const attn::DenseView& v, const Target& tg) {
  const bool per_seq = v.k1.per_seq || !v.kv_lens.empty();
  check(v.kv_lens.empty() || (v.k1.per_seq && v.v.per_seq && (v.dk2 == 0 || v.k2.per_seq)),
        "vulkan attention: per-sequence kv lengths need per-sequence K/V tensors");
  supported_only_if(v.dk2 == 0 || v.k2.row == v.dk2, "vulkan attention: k2's rows are {} apart, the kernel reads them {}",
                    v.k2.row, v.dk2);
  supported_only_if(v.token_major() || (v.head_rows == v.q_len && v.pos_rows == 1),
                    "vulkan attention: q rows {} per head, {} per position: neither head- nor token-major", v.head_rows,
                    v.pos_rows);
  const int64_t batch = per_seq ? 1 : v.seqs, q_rows = v.num_heads * v.q_len;
  std::vector<Dispatch> out;
  for (int64_t b = 0; b < (per_seq ? v.seqs : 1); ++b) {
    const std::string k1 = v.k1.name(b), k2 = v.dk2 ? v.k2.name(b) : k1, vt = v.v.name(b);
    Attn a{.q = v.q, .k1 = k1, .k2 = k2, .v = vt, .kv_lens = v.kv_lens, .out = v.out, .batch = batch,
           .q_len = v.q_len, .kv_len = v.kv_len, .pos_offset = v.pos_offset, .nh = v.num_heads, .nkv = v.kv_heads,
           .dqk = v.dqk(), .dk1 = v.dk1, .dv = v.dv, .causal = v.causal, .window = v.window,
           .k1_hs = slot_stride(v, v.k1, batch), .k2_hs = v.dk2 ? slot_stride(v, v.k2, batch) : 0,
           .v_hs = slot_stride(v, v.v, batch), .k1_rs = v.k1.row, .v_rs = v.v.row,
           .q_token_major = v.token_major(), .scale = float(v.scale)};
    if (per_seq) a.q_off = b * q_rows * v.dqk(), a.o_off = b * q_rows * v.dv;
    if (!v.kv_lens.empty()) a.kv_len_index = static_cast<uint32_t>(b), a.capacity = v.kv_len;
    const auto d = attn(tg, a, v.dk2 > 0);
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

// One registration line per op: its view is its description's.
template <class P> void add(PlannerTable& t, OpRef<P> op) {
  add_planner(t, op, [op](const P& p, const Decls&, const Target& tg) { return attend(view_of<attn::DenseView>(op, p), tg); });
}

}  // namespace

void add_attention_planners(PlannerTable& t) {
#define TS_ADD(op) add(t, ops::op);
  TS_DENSE_ATTENTION_VIEW_OPS(TS_ADD)
#undef TS_ADD
}

}  // namespace ts::vk
