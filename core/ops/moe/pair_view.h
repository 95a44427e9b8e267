#pragma once
// The expert pair view of the moe family's expert GEMV / GEMM ops (docs/catalog.md, "Family moe",
// "The expert pair view"): every such op is a list of pairs, pair p reading the activation row
//   a[a_off + (p / top_k) * outer + (p % top_k) * inner .. + n_cols)
// against expert ids[ids_off + p] (the GEMVs) or the expert whose list names p (the prefill GEMM), into
// out row p. Each op's view comes from its parameters alone, here, once; the descriptions' window
// checks, the reference and the three backends read it (the device engines take its six numbers as
// launch arguments) and none derives it again.
#include <cstdint>
#include <string>

#include "core/checked.h"
#include "core/ops/moe_params.h"

namespace ts::moe {

struct PairView {
  int64_t pairs = 0;    // pairs p = 0 .. pairs - 1
  int64_t ids_off = 0;  // GEMVs: pair p's expert is ids[ids_off + p]
  int64_t a_off = 0, top_k = 1, outer = 0, inner = 0;

  // Where pair p's activation row starts in a.
  int64_t a_start(int64_t p) const { return a_off + (p / top_k) * outer + (p % top_k) * inner; }
  // The last pair's start, with checked arithmetic (parameters may be hostile): the largest start, as
  // both strides are non-negative.
  int64_t last_start() const;
  // The distinct activation rows the pairs read (a stride of 0 broadcasts one row), for cost models.
  int64_t rows_read() const { return (outer == 0 ? 1 : pairs / top_k) * (inner == 0 ? 1 : top_k); }
};

// gemv_quant_moe_id: pair i reads a[i * src1_stride ..], expert ids[i].
PairView pair_view(const GemvQuantMoeIdParams& p);
// gemv_quant_moe_id_offset: the same from a_offset, experts from ids[ids_offset ..].
PairView pair_view(const GemvQuantMoeIdOffsetParams& p);
// The batched GEMVs: m tokens x top_k slots, a row per (token, slot) by the two strides.
PairView pair_view(const GemvQuantMoeIdBatchedParams& p);
// gemv_quant_moe_id_gate_up_silu: one activation row broadcast to every selected expert.
PairView pair_view(const GemvQuantMoeIdGateUpSiluParams& p);
// gemm_quant_moe_id(_indirect): pair t * top_k + s reads a's row t (ne11 1) or row t * top_k + s
// (ne11 top_k); the experts come from the per-expert lists, not from ids_off.
PairView pair_view(const GemmQuantMoeIdParams& p);

// The parameter check every GEMV view shares: the last pair's row ends inside a's a_len elements.
// An Error naming `op` and the view's terms otherwise.
void check_window(const PairView& v, int64_t n_cols, int64_t a_len, const std::string& op);

// A pair as a kernel runs it: its activation row's start, its expert and its output row.
struct Site {
  int64_t a_at, expert, out_row;
};

// The GEMVs' pairs in order, f(Site) for each: experts from ids[ids_off + p].
template <class F> void for_each_pair(const PairView& v, const int32_t* ids, F&& f) {
  for (int64_t p = 0; p < v.pairs; ++p) f(Site{v.a_start(p), ids[v.ids_off + p], p});
}

// The prefill GEMM's pairs as its lists give them: expert e's pairs ids[e * max_per_expert + i] for
// i < tpe[e] (the slots past tpe[e] are stale and never read), expert by expert.
template <class F>
void for_each_listed(const GemmQuantMoeIdParams& p, const int32_t* ids, const int32_t* tpe, F&& f) {
  const PairView v = pair_view(p);
  for (int64_t e = 0; e < p.w.num_experts; ++e)
    for (int64_t i = 0; i < tpe[e]; ++i) {
      const int64_t pair = ids[e * p.max_per_expert + i];
      f(Site{v.a_start(pair), e, pair});
    }
}

}  // namespace ts::moe
