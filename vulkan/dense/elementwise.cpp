// silu, add and mul (b broadcast), gelu, add_inplace, scaled_add_inplace, add_bias,
// fused_silu_mul_split(_strided): elementwise.comp.
#include "core/ops/core_params.h"
#include "core/ops/tensor/broadcast.h"
#include "core/ops/tensor_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
constexpr uint32_t kWg = 256;  // elementwise.comp's work-group size (its specialization constant 0)

// Push block of elementwise.comp: rows, cols, a, b, f.
Dispatch ew(const Target& tg, Kernel kernel, std::vector<Binding> bindings, int64_t rows, int64_t cols,
            int64_t a = 0, int64_t b = 0, float f = 0) {
  Dispatch d;
  d.shader = tg.variant(kernel);
  d.spec = {kWg};
  d.bindings = std::move(bindings);
  d.push = Push().u(rows).u(cols).u(a).u(b).f(f).words();
  d.groups = grid_2d(rows, cols, kWg, tg);
  return d;
}
// add / mul: out's d0 * d1 rows of d2, b indexed by core/ops/tensor/broadcast.h's strides (the
// bcast kernels' own push block: rows, cols, d1, s0, s1, s2).
Dispatch broadcast(const Target& tg, const BroadcastParams& p, Kernel kernel) {
  const bcast::Strides s = bcast::strides(p);
  Dispatch d;
  d.shader = tg.variant(kernel);
  d.spec = {kWg};
  d.bindings = {"a", "b", "out"};
  d.push = Push().u(p.d0 * p.d1).u(p.d2).u(p.d1).u(s.s0).u(s.s1).u(s.s2).words();
  d.groups = grid_2d(p.d0 * p.d1, p.d2, kWg, tg);
  return d;
}
}  // namespace

void add_elementwise_planners(PlannerTable& t) {
  add_planner(t, ops::silu, [](const SiluParams& p, const Decls&, const Target& tg) {
    return std::vector{ew(tg, Kernel::ew_silu, {"x", "out"}, 1, p.len)};
  });
  add_planner(t, ops::add, [](const BroadcastParams& p, const Decls&, const Target& tg) {
    return std::vector{broadcast(tg, p, Kernel::ew_bcast_add)};
  });
  add_planner(t, ops::mul, [](const BroadcastParams& p, const Decls&, const Target& tg) {
    return std::vector{broadcast(tg, p, Kernel::ew_bcast_mul)};
  });
  add_planner(t, ops::gelu, [](const GeluParams& p, const Decls&, const Target& tg) {
    return std::vector{ew(tg, Kernel::ew_gelu, {"x", "out"}, 1, p.len)};
  });
  add_planner(t, ops::add_inplace, [](const AddInplaceParams& p, const Decls&, const Target& tg) {
    return std::vector{ew(tg, Kernel::ew_add, {"residual", "x"}, 1, p.len)};
  });
  add_planner(
      t, ops::scaled_add_inplace, [](const ScaledAddInplaceParams& p, const Decls&, const Target& tg) {
        return std::vector{ew(tg, Kernel::ew_scaled_add, {"dst", "src"}, 1, p.len, 0, 0, p.scale)};
      });
  add_planner(t, ops::add_bias, [](const AddBiasParams& p, const Decls&, const Target& tg) {
    return std::vector{ew(tg, Kernel::ew_add_bias, {"data", "bias"}, p.rows, p.cols)};
  });
  add_planner(
      t, ops::fused_silu_mul_split, [](const FusedSiluMulSplitParams& p, const Decls&, const Target& tg) {
        return std::vector{ew(tg, Kernel::ew_silu_mul, {"gate_up", "out"}, p.tokens, p.im)};
      });
  add_planner(
      t, ops::fused_silu_mul_split_strided,
      [](const FusedSiluMulSplitStridedParams& p, const Decls&, const Target& tg) {
        return std::vector{ew(tg, Kernel::ew_silu_mul, {"gate_up", "out"}, p.tokens, p.intermediate, p.in_row_offset,
                              p.out_row_offset)};
      });
}

}  // namespace ts::vk
