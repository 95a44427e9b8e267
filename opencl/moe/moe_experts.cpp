// The moe family's expert GEMV / GEMM. Every GEMV op is the one kernel kernels/moe_gemv.cl with its
// pair view (core/ops/moe/pair_view.h: where pair p reads, which ids slot names its expert); the prefill GEMM is the tiled quant
// GEMM gathering each expert's pairs (kernels/moe_gemm.cl), its grid sized for the worst case so that
// nothing about the routing is read on the host.
#include <algorithm>

#include "core/ops/moe/pair_view.h"
#include "core/ops/moe_params.h"
#include "core/quant/formats.h"
#include "opencl/kernels/moe_gemv_args.h"
#include "opencl/quant/quant_kernels.h"

namespace ts::ocl {
namespace {

std::string expert_defines(const Planner& pl, QuantKind kind) { return kind_defines(kind, dtype_size(pl.dtype())); }

// out = the pairs' GEMVs against stack `weights`; with `up`, silu(that) * (the same against up).
void expert_gemv(Planner& pl, const MoeExperts& w, const moe::PairView& v, const char* weights, const char* up,
                 const char* out) {
  const GemvShape g = gemv_shape(pl, w.kind, 1, w.n_cols);
  // CPU drivers: a group streams at least 32 Ki weight values rather than one short row (fewer, longer
  // groups for the driver's threads; on a loaded 2-core PoCL machine the Qwen3-30B-A3B decode went from
  // 6.2 to 6.0 ms, within the noise); GPUs: one block, many groups. A launch argument, not a build
  // option: one program per kind and dtype.
  const int64_t rb = pl.limits().cpu ? std::clamp<int64_t>(32768 / (w.n_cols * g.r), 1, ceil_div(w.n_rows, g.r)) : 1;
  const std::string defines = fmt::format("{} {}{}", g.defines(), expert_defines(pl, w.kind), up ? " -DSILU" : "");
  pl.dispatch(pl.kernel("moe_gemv.cl", "moe_gemv", defines), {ceil_div(w.n_rows, g.r * rb) * g.wg, size_t(v.pairs)},
              {size_t(g.wg), 1},
              pl.args(pack(MoeGemvArgsIn{.n = w.n_rows, .k = w.n_cols, .ids_off = v.ids_off, .a_off = v.a_off,
                                         .top_k = v.top_k, .outer = v.outer, .inner = v.inner, .rb_count = rb})),
              pl.buf("a"), pl.buf(weights), pl.buf(up ? up : weights), pl.buf("ids"), pl.buf(out));
}

// Column tiles x row tiles x experts. A listed pair is distinct and tpe sums to at most the pair count
// (the op's validation), so no expert lists more than min(max_per_expert, batch x top_k) pairs: the row
// tiles cover that worst case and the groups past tpe[e] exit (kernels/moe_gemm.cl).
void plan_gemm(Planner& pl) {
  const auto& p = pl.params<GemmQuantMoeIdParams>();
  const MoeExperts& w = p.w;
  GemmTile t = quant::format(w.kind) ? quant_gemm_tile(pl, w.n_cols) : gemm_tile(pl.limits());
  // 32-row tiles where an expert's average share of the pairs is that small: most experts of a prefill
  // hold a few dozen pairs, and a tile's rows past tpe[e] are computed for nothing (PoCL, Qwen3-30B-A3B's
  // 512 tokens: 128-row tiles 3.8 s, 32-row 2.0 s). Two tile heights at most: few programs to build.
  constexpr int kShortTile = 32;
  if (ceil_div(p.batch * p.top_k, w.num_experts) <= kShortTile && t.tm > kShortTile && kShortTile % (t.wy * t.rm) == 0)
    t.tm = kShortTile;
  const int64_t rows = std::min(p.max_per_expert, p.batch * p.top_k);
  const moe::PairView v = moe::pair_view(p);  // which row of a pair t * top_k + s reads
  pl.dispatch(pl.kernel("moe_gemm.cl", "gemm_tiled",
                        gemm_tile_defines(t, expert_defines(pl, w.kind))),
              {ceil_div(w.n_rows, t.tn) * t.wx, ceil_div(rows, t.tm) * t.wy, size_t(w.num_experts)},
              {size_t(t.wx), size_t(t.wy), 1}, pl.buf("a"), pl.buf("weights"), pl.buf("out"), rows, w.n_rows,
              w.n_cols, w.n_rows, 0, pl.buf("ids"), pl.buf("tpe"), p.max_per_expert, p.top_k, v.outer, v.inner);
}

// A GEMV op: its pair view (core/ops/moe/pair_view.h) against `weights`, or (silu) gate_w and up_w.
template <class P> void add_gemv(PlanTable& t, const OpRef<P>& op, bool silu) {
  add_plan(t, op, [silu](Planner& pl) {
    const auto& p = pl.params<P>();
    if (silu)
      expert_gemv(pl, p.w, moe::pair_view(p), "gate_w", "up_w", "silu_out");
    else
      expert_gemv(pl, p.w, moe::pair_view(p), "weights", nullptr, "out");
  });
}

}  // namespace

void add_moe_expert_ops(PlanTable& t) {
  add_gemv(t, ops::gemv_quant_moe_id, false);
  add_gemv(t, ops::gemv_quant_moe_id_offset, false);
  add_gemv(t, ops::gemv_quant_moe_id_batched, false);
  add_gemv(t, ops::gemv_quant_moe_id_gate_up_silu, true);
  add_gemv(t, ops::gemv_quant_moe_id_gate_up_silu_batched, true);
  add_plan(t, ops::gemm_quant_moe_id, plan_gemm);
  add_plan(t, ops::gemm_quant_moe_id_indirect, plan_gemm);
}

}  // namespace ts::ocl
