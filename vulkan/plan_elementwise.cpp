// gelu, add_inplace, scaled_add_inplace, add_bias, fused_silu_mul_split(_strided): elementwise.comp.
#include "core/ops/core_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
constexpr int64_t kPerGroup = 256 * 4;  // WG invocations, a few elements each

// Push block of elementwise.comp: n, a, b, c, f.
Dispatch ew(const Target& tg, const char* kernel, std::vector<std::string> bindings, int64_t n, int64_t a = 0,
            int64_t b = 0, int64_t c = 0, float f = 0) {
  Dispatch d;
  d.shader = tg.variant(kernel);
  d.bindings = std::move(bindings);
  d.push = Push().u(n).u(a).u(b).u(c).f(f).words();
  d.groups = {groups_for(n, kPerGroup, tg.max_groups[0]), 1, 1};
  return d;
}
}  // namespace

void add_elementwise_planners(PlannerTable& t) {
  add_planner<GeluParams>(t, "gelu", [](const GeluParams& p, const TensorMap&, const Target& tg) {
    return std::vector{ew(tg, "ew_gelu", {"x", "out"}, p.len)};
  });
  add_planner<AddInplaceParams>(t, "add_inplace", [](const AddInplaceParams& p, const TensorMap&, const Target& tg) {
    return std::vector{ew(tg, "ew_add", {"residual", "x"}, p.len)};
  });
  add_planner<ScaledAddInplaceParams>(
      t, "scaled_add_inplace", [](const ScaledAddInplaceParams& p, const TensorMap&, const Target& tg) {
        return std::vector{ew(tg, "ew_scaled_add", {"dst", "src"}, p.len, 0, 0, 0, p.scale)};
      });
  add_planner<AddBiasParams>(t, "add_bias", [](const AddBiasParams& p, const TensorMap&, const Target& tg) {
    return std::vector{ew(tg, "ew_add_bias", {"data", "bias"}, p.rows * p.cols, p.cols)};
  });
  add_planner<FusedSiluMulSplitParams>(
      t, "fused_silu_mul_split", [](const FusedSiluMulSplitParams& p, const TensorMap&, const Target& tg) {
        return std::vector{ew(tg, "ew_silu_mul", {"gate_up", "out"}, p.tokens * p.im, p.im, 0, 0)};
      });
  add_planner<FusedSiluMulSplitStridedParams>(
      t, "fused_silu_mul_split_strided",
      [](const FusedSiluMulSplitStridedParams& p, const TensorMap&, const Target& tg) {
        return std::vector{ew(tg, "ew_silu_mul", {"gate_up", "out"}, p.tokens * p.intermediate, p.intermediate,
                              p.in_row_offset, p.out_row_offset)};
      });
}

}  // namespace ts::vk
