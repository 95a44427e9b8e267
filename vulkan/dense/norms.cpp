// rms_norm, fused_add_rms_norm, layer_norm: one work group per row (norms.comp).
#include "core/ops/core_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
Dispatch norm(const Target& tg, Kernel kernel, std::vector<Binding> bindings, const RmsNormParams& p) {
  Dispatch d;
  d.shader = tg.variant(kernel);
  d.bindings = std::move(bindings);
  d.push = Push().u(p.tokens).u(p.dim).f(p.eps).words();
  d.groups = {groups_for(p.tokens, 1, tg.group_cap), 1, 1};
  return d;
}
}  // namespace

void add_norm_planners(PlannerTable& t) {
  add_planner(t, ops::rms_norm, [](const RmsNormParams& p, const Decls&, const Target& tg) {
    return std::vector{norm(tg, Kernel::norms_rms, {"x", "w", "out"}, p)};
  });
  add_planner(
      t, ops::fused_add_rms_norm, [](const FusedAddRmsNormParams& p, const Decls&, const Target& tg) {
        return std::vector{norm(tg, Kernel::norms_add_rms, {"residual", "x", "w", "out"}, p)};
      });
  add_planner(t, ops::layer_norm, [](const LayerNormParams& p, const Decls&, const Target& tg) {
    return std::vector{norm(tg, Kernel::norms_layer, {"x", "gamma", "beta", "out"}, p)};
  });
}

}  // namespace ts::vk
