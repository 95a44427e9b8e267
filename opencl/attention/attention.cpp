// The dense attention ops (TS_DENSE_ATTENTION_VIEW_OPS) on the attention engine (attention_engine.h),
// each through its view (core/ops/core/attention_view.h): affine K/V rows read where they lie, the key in
// two parts, a separate value width, q / out rows head- or token-major.
#include <string>

#include "core/ops/core/attention_view.h"
#include "core/ops/view_of.h"
#include "opencl/attention/attention_engine.h"

namespace ts::ocl {
namespace {

Strides strides(const attn::KvRows& r) { return {r.seq, r.head, r.row}; }

// One dispatch (plus the key split's combine) for the whole batch; per-sequence tensors or lengths
// (flash_attention_batched_per_cache) take one per sequence, each reading its own buffers and its
// length on the device, so its pieces cover kv_len (the most keys).
void attend(Planner& pl, const attn::DenseView& v) {
  const bool per_seq = v.k1.per_seq || !v.kv_lens.empty();
  check(!per_seq || v.kv_lens.empty() || (v.k1.per_seq && v.v.per_seq && (v.dk2 == 0 || v.k2.per_seq)),
        "OpenCL attention: per-sequence kv lengths need per-sequence K/V tensors");
  const int64_t q_rows = v.num_heads * v.q_len;  // rows of one sequence
  for (int64_t b = 0; b < (per_seq ? v.seqs : 1); ++b) {
    const std::string k1 = v.k1.name(b), k2 = v.dk2 ? v.k2.name(b) : k1, vt = v.v.name(b);
    flash(pl, {.q = v.q, .k1 = k1, .k2 = k2, .v = vt, .out = v.out, .kv_lens = v.kv_lens,
               .kv_len_item = v.kv_lens.empty() ? -1 : b, .q_off = per_seq ? b * q_rows * v.dqk() : 0,
               .out_off = per_seq ? b * q_rows * v.dv : 0, .batch = per_seq ? 1 : v.seqs, .nh = v.num_heads,
               .nkv = v.kv_heads, .q_len = v.q_len, .kv_len = v.kv_len, .pos_offset = v.pos_offset,
               .causal = v.causal, .window = v.window, .scale = float(v.scale), .dk1 = v.dk1, .dk2 = v.dk2,
               .dv = v.dv, .s1 = strides(v.k1), .s2 = strides(v.dk2 ? v.k2 : v.k1), .sv = strides(v.v),
               .head_rows = v.head_rows, .pos_rows = v.pos_rows});
  }
}

// One registration line per op: its view is its description's.
template <class P> void add(PlanTable& t, OpRef<P> op) {
  add_plan(t, op, [op](Planner& pl) { attend(pl, view_of<attn::DenseView>(op, pl.params<P>())); });
}

}  // namespace

void add_attention_ops(PlanTable& t) {
#define TS_ADD(op) add(t, ops::op);
  TS_DENSE_ATTENTION_VIEW_OPS(TS_ADD)
#undef TS_ADD
}

}  // namespace ts::ocl
