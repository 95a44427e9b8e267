// The moe family's combines on the device: silu_mul / the weighted sums on elementwise.comp, the fused
// next-layer norm on norms.comp's RMS norm. The routing is vulkan/moe/moe_route.cpp, the expert GEMV /
// GEMM vulkan/moe/moe_experts.cpp.
#include "core/ops/moe_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
constexpr uint32_t kEwWg = 256;  // elementwise.comp's work-group size (its specialization constant 0)

// elementwise.comp over a [rows, cols] grid; push block rows, cols, a, b, f, k.
Dispatch ew(const Target& tg, Kernel kernel, std::vector<Binding> bindings, int64_t rows, int64_t cols, int64_t a = 0,
            int64_t b = 0, int64_t k = 0) {
  Dispatch d;
  d.shader = tg.variant(kernel);
  d.spec = {kEwWg};
  d.bindings = std::move(bindings);
  d.push = Push().u(rows).u(cols).u(a).u(b).f(0).u(k).words();
  d.groups = grid_2d(rows, cols, kEwWg, tg);
  return d;
}

// out[out_offset + b*hidden + h] (+)= sum_k weights[weights_offset + b*top_k + k] * slots[b, k, h].
Dispatch weighted_sum(const Target& tg, const char* out, bool add, int64_t batch, int64_t top_k, int64_t hidden,
                      int64_t weights_offset = 0, int64_t out_offset = 0) {
  return ew(tg, add ? Kernel::ew_wsum_add : Kernel::ew_wsum, {out, "slots", "weights"}, batch, hidden, weights_offset,
            out_offset, top_k);
}
}  // namespace

void add_moe_combine_planners(PlannerTable& t) {
  add_planner(t, ops::silu_mul_stacked, [](const SiluMulStackedParams& p, const Decls&, const Target& tg) {
    return std::vector{ew(tg, Kernel::ew_silu_mul_pair, {"gate", "out", "up"}, p.n_slots, p.ffn)};
  });
  add_planner(t, ops::silu_mul_batched, [](const SiluMulBatchedParams& p, const Decls&, const Target& tg) {
    return std::vector{ew(tg, Kernel::ew_silu_mul_pair, {"gate", "out", "up"}, p.total_pairs, p.ffn)};
  });
  add_planner(t, ops::weighted_sum_stacked, [](const WeightedSumStackedParams& p, const Decls&, const Target& tg) {
    return std::vector{weighted_sum(tg, "out", false, 1, p.n_slots, p.hidden)};
  });
  add_planner(
      t, ops::weighted_sum_residual_stacked, [](const WeightedSumStackedParams& p, const Decls&, const Target& tg) {
        return std::vector{weighted_sum(tg, "residual", true, 1, p.n_slots, p.hidden)};
      });
  add_planner(t, ops::weighted_sum_residual_norm_stacked,
              [](const WeightedSumResidualNormParams& p, const Decls&, const Target& tg) {
                // Its chain, as the op is defined: the residual update, then rms_norm of the stored
                // residual (norms.comp, one work group for the row; push tokens, dim, eps).
                Dispatch norm;
                norm.shader = tg.variant(Kernel::norms_rms);
                norm.bindings = {"residual", "next_norm_w", "normed_out"};
                norm.push = Push().u(1).u(p.hidden).f(p.eps).words();
                return std::vector{weighted_sum(tg, "residual", true, 1, p.n_slots, p.hidden), norm};
              });
  add_planner(t, ops::weighted_sum_batched, [](const WeightedSumBatchedParams& p, const Decls&, const Target& tg) {
    return std::vector{weighted_sum(tg, "out", false, p.batch, p.top_k, p.hidden)};
  });
  add_planner(t, ops::weighted_sum_batched_offset,
              [](const WeightedSumBatchedOffsetParams& p, const Decls&, const Target& tg) {
                return std::vector{
                    weighted_sum(tg, "out", false, p.batch, p.top_k, p.hidden, p.weights_offset, p.out_offset)};
              });
}

}  // namespace ts::vk
