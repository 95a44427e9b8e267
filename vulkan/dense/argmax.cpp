// argmax_rows: one work group per row (argmax.comp).
#include "core/ops/core_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

void add_argmax_planners(PlannerTable& t) {
  add_planner(t, ops::argmax_rows, [](const ArgmaxRowsParams& p, const Decls&, const Target& tg) {
    Dispatch d;
    d.shader = tg.variant(Kernel::argmax);
    d.bindings = {"logits", "ids"};
    d.push = Push().u(p.m).u(p.n).words();
    d.groups = {groups_for(p.m, 1, tg.group_cap), 1, 1};
    return std::vector{d};
  });
}

}  // namespace ts::vk
