// gemm: the shared-memory tiled kernel, or the GEMV kernel when m is small (decode).
#include "core/ops/core_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
constexpr int64_t kTile = 128;      // gemm.comp: TS * R
constexpr int64_t kGemvMaxM = 4;    // gemv.comp: MAXM
constexpr int64_t kGemvRows = 8;    // gemv.comp: NR
}  // namespace

void add_gemm_planners(PlannerTable& t) {
  add_planner(t, ops::gemm, [](const GemmParams& p, const Decls& decls, const Target& tg) {
    // b above maxStorageBufferRange: one dispatch per window of its rows (output columns).
    std::vector<Dispatch> out;
    const uint64_t row_bytes = static_cast<uint64_t>(p.k) * dtype_size(decls.at("b").dtype);
    for (auto [n0, nn] : tg.row_windows(p.n, row_bytes)) {
      Dispatch d;
      d.bindings = {"a", Binding("b", n0 * row_bytes, nn * row_bytes), "out"};
      d.push = Push().u(p.m).u(nn).u(p.k).u(p.n).u(n0).words();
      if (p.m <= kGemvMaxM) {
        d.shader = tg.variant(Kernel::gemv);
        d.groups = {groups_for(nn, kGemvRows, tg.group_cap), 1, 1};
      } else {
        d.shader = tg.variant(Kernel::gemm_tiled);
        d.groups = {ceil_div(nn, kTile), ceil_div(p.m, kTile), 1};
      }
      out.push_back(std::move(d));
    }
    return out;
  });
}

}  // namespace ts::vk
