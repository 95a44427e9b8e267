// gemm: the shared-memory tiled kernel, or the GEMV kernel when m is small (decode).
#include "core/ops/core_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
constexpr int64_t kTile = 64;       // gemm.comp: TS * R
constexpr int64_t kGemvMaxM = 4;    // gemv.comp: MAXM
}  // namespace

void add_gemm_planners(PlannerTable& t) {
  add_planner<GemmParams>(t, "gemm", [](const GemmParams& p, const TensorMap&, const Target& tg) {
    Dispatch d;
    d.bindings = {"a", "b", "out"};
    d.push = Push().u(p.m).u(p.n).u(p.k).words();
    if (p.m <= kGemvMaxM) {
      d.shader = tg.variant("gemv", true);
      d.groups = {groups_for(p.n, 1, tg.max_groups[0]), 1, 1};
    } else {
      d.shader = tg.variant("gemm_tiled");
      d.groups = {ceil_div(p.n, kTile), ceil_div(p.m, kTile), 1};
    }
    return std::vector{d};
  });
}

}  // namespace ts::vk
