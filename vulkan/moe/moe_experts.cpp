// The moe family's expert GEMV / GEMM. Every GEMV variant is moe_gemv.comp under its op's pair view
// (core/ops/moe/pair_view.h: where pair p finds its activation row, its expert and its output row;
// push constants), so the variants below differ only in the view their parameters give. The prefill GEMM is gemm_quant.comp's tiling
// built for MoE (grid: column tiles x row tiles x experts; tiles past tpe[e] exit on the device, so
// the launch is sized for the worst case and no routing data is read on the host). GGUF kinds and
// plain F32 / F16 / BF16 stacks run through the same kernels (the kind is a specialization constant).
#include <algorithm>

#include "core/ops/moe/pair_view.h"
#include "core/ops/moe_params.h"
#include "core/quant/formats.h"
#include "vulkan/plan.h"
#include "vulkan/shaders/moe_gemv_push.glsl"
#include "vulkan/shaders/quant_gemm_push.glsl"

namespace ts::vk {

namespace {
constexpr uint32_t kGemvWg = 64;  // at most moe_gemv.comp's MAX_WG
constexpr int64_t kGemvRows = 4;  // moe_gemv.comp: NR
constexpr int64_t kTile = 64;     // gemm_quant.comp: BM

// The shaders number the kinds as QuantKind does: both expand core/kinds.inc (shaders/kinds.glsl).
uint32_t kind_spec(QuantKind k) { return static_cast<uint32_t>(k); }

// The shaders read a stack as uint words and it need not end on one (GGUF blocks, 16-bit plain rows):
// the binding covers the last partial word, inside the tensor's trailing guard zone. The whole stack
// is bound (any pair may pick any expert), so it must fit the device's storage-buffer range.
Binding stack(const Decls& decls, const Target& tg, const std::string& name) {
  const uint64_t bytes = decls.nbytes(name), words = (bytes + 3) / 4 * 4;
  check(words <= tg.max_range,
        "vulkan: expert stack '{}' is {} bytes, above this device's maxStorageBufferRange ({}); the MoE kernels "
        "bind every expert at once", name, bytes, tg.max_range);
  return Binding(name, 0, std::max<uint64_t>(words, 4));
}

// One dispatch of the core; `up` names the up stack of the fused gate + up + SiLU, empty otherwise.
std::vector<Dispatch> gemv(const MoeExperts& w, const moe::PairView& v, const Decls& decls, const Target& tg,
                           const std::string& gate, const std::string& up, const char* out) {
  Dispatch d;
  d.shader = tg.variant(Kernel::moe_gemv);
  const Binding g = stack(decls, tg, gate);
  d.bindings = {"a", g, up.empty() ? g : stack(decls, tg, up), "ids", out};
  d.push = push_words(MoeGemvPushIn{.pairs = v.pairs, .n_rows = w.n_rows, .n_cols = w.n_cols, .a_off = v.a_off,
                                    .ids_off = v.ids_off, .top_k = v.top_k, .outer = v.outer, .inner = v.inner,
                                    .experts = w.num_experts});
  d.spec = {kGemvWg, kind_spec(w.kind), up.empty() ? 0u : 1u};
  d.groups = grid_2d(v.pairs, w.n_rows, kGemvRows, tg);
  return {d};
}

// gemm_quant_moe_id(_indirect): grid x over column tiles, z over experts, y over row tiles up to
// max_per_expert; on a CPU driver (group cap) fewer row-tile groups that loop, as empty groups
// there cost a group's setup each.
std::vector<Dispatch> gemm(const GemmQuantMoeIdParams& p, const Decls& decls, const Target& tg) {
  Dispatch d;
  d.shader = tg.variant(Kernel::moe_gemm);
  d.bindings = {"a", stack(decls, tg, "weights"), "out", "ids", "tpe"};
  d.push = push_words(QuantGemmPushIn{.m = 0, .n = p.w.n_rows, .k = p.w.n_cols, .ldo = p.w.n_rows, .n_off = 0,
                                      .experts = p.w.num_experts, .max_per_expert = p.max_per_expert,
                                      .top_k = p.top_k, .ne11 = p.ne11});
  d.spec = {kind_spec(p.w.kind)};
  const uint32_t gx = ceil_div(p.w.n_rows, kTile);
  check(gx <= tg.max_groups[0], "vulkan: gemm_quant_moe_id needs {} column tiles, above the device's {}", gx,
        tg.max_groups[0]);
  const uint32_t gz = groups_for(p.w.num_experts, 1, tg.max_groups[2]);
  const uint64_t per_y = std::max<uint64_t>(1, tg.group_cap / (static_cast<uint64_t>(gx) * gz));
  d.groups = {gx, groups_for(p.max_per_expert, kTile, static_cast<uint32_t>(std::min<uint64_t>(per_y, tg.max_groups[1]))),
              gz};
  return {d};
}
// A GEMV op: its pair view (core/ops/moe/pair_view.h, moe_gemv.comp's push block) against `weights`,
// or (silu) gate_w and up_w.
template <class P> void add_gemv(PlannerTable& t, const OpRef<P>& op, bool silu) {
  add_planner(t, op, [silu](const P& p, const Decls& decls, const Target& tg) {
    return silu ? gemv(p.w, moe::pair_view(p), decls, tg, "gate_w", "up_w", "silu_out")
                : gemv(p.w, moe::pair_view(p), decls, tg, "weights", "", "out");
  });
}

}  // namespace

void add_moe_expert_planners(PlannerTable& t) {
  add_gemv(t, ops::gemv_quant_moe_id, false);
  add_gemv(t, ops::gemv_quant_moe_id_offset, false);
  add_gemv(t, ops::gemv_quant_moe_id_batched, false);
  add_gemv(t, ops::gemv_quant_moe_id_gate_up_silu, true);
  add_gemv(t, ops::gemv_quant_moe_id_gate_up_silu_batched, true);
  add_planner(t, ops::gemm_quant_moe_id, gemm);
  add_planner(t, ops::gemm_quant_moe_id_indirect, gemm);
}

}  // namespace ts::vk
