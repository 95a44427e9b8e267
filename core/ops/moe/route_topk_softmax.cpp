// route_topk_softmax: the MoE router. Softmax over each row of logits [batch, num_experts], the top_k
// largest (equal logits: the lower expert id first; ids ordered by weight descending), renormalised
// to sum 1 when norm_topk_prob. out_ids I32 [batch, top_k], out_weights F32 [batch, top_k].
#include <algorithm>
#include <cmath>

#include "core/ops/moe/moe_inputs.h"
#include "core/ops/moe_params.h"

namespace ts {
using namespace describe;

namespace {
RouteTopkSoftmaxParams route(int64_t batch, int64_t num_experts, int64_t top_k, bool norm) {
  return {batch, num_experts, top_k, norm};
}

// Rows cycle through four kinds. Row 0, 4, ...: integers in [-2, 2], so several experts tie at the
// maximum and the lower id must win. Row 1, 5, ...: N(0, 1e4) (clamped to F16's range): a softmax that
// does not subtract the max overflows. Row 2, 6, ...: N(0, 1). Row 3, 7, ...: every logit equal, so
// the lowest top_k ids win, all with weight 1/num_experts.
void logits(Tensor& x, int64_t batch, int64_t num_experts, Rng& r) {
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t e = 0; e < num_experts; ++e) {
      double v;
      switch (t % 4) {
        case 0: v = double(r.below(5)) - 2.0; break;
        case 1: v = std::clamp(1e4 * r.normal(), -6e4, 6e4); break;
        case 2: v = r.normal(); break;
        default: v = 0.5;
      }
      x.set(t * num_experts + e, v);
    }
}

// The weights are F32 whatever the logits' dtype. A backend's exp(l - max) carries the F32 rounding of
// its argument, a relative error |l - max| * u32 that exp(l - max) * |l - max| <= 1/e turns into an
// absolute one below u32 (the denominators are at least 1: they hold exp(0)); on top, exp and the
// divisions (a few ulp each) and the F32 sums over num_experts and over top_k positive terms.
Tolerance weights_tolerance(const RouteTopkSoftmaxParams& p, DType, const TensorMap&) {
  const double u32 = 0x1p-24;
  const double sums = 8.0 * std::sqrt(double(p.num_experts)) + 8.0 * std::sqrt(double(p.top_k));
  return {4 * u32 + tol::underflow_floor(DType::F32), 2 * unit_roundoff(DType::F32) + (sums + 12) * u32,
          fmt::format("softmax in F32: exp argument rounding <= u32/e abs; sums over {} and {} positive terms "
                      "8*sqrt(n)*u32, exp + 2 divides 12 u32 rel; F32 output",
                      p.num_experts, p.top_k)};
}
}  // namespace

const Op& op_route_topk_softmax() {
  static const TypedOp<RouteTopkSoftmaxParams> op({
      .name = "route_topk_softmax",
      .family = "moe",
      .summary = "softmax over experts, top_k (ties: lower id), renormalised when norm_topk_prob",
      .tensors = [](const RouteTopkSoftmaxParams& p) {
        return std::vector{in("logits", {p.batch, p.num_experts}),
                           pinned(out("out_ids", {p.batch, p.top_k}), DType::I32),
                           pinned(out("out_weights", {p.batch, p.top_k}), DType::F32)};
      },
      .validate_params = [](const RouteTopkSoftmaxParams& p) {
        positive(p.batch, "batch");
        positive(p.num_experts, "num_experts");
        positive(p.top_k, "top_k");
        top_k_fits("route_topk_softmax", p.top_k, p.num_experts);
        check(p.num_experts <= INT32_MAX, "route_topk_softmax: num_experts {} does not fit an I32 id", p.num_experts);
      },
      .generate = [](const RouteTopkSoftmaxParams& p, TensorMap& t, Rng& r) {
        logits(t["logits"], p.batch, p.num_experts, r);
      },
      .tolerance = weights_tolerance,
      // The ranking is by the exact logits (docs/catalog.md): any other id is wrong.
      .outputs = {{"out_ids", [](const RouteTopkSoftmaxParams&, DType, const TensorMap&) { return tol::exact(); }, {}}},
      .cost = [](const RouteTopkSoftmaxParams& p, DType dt) {
        const double n = double(p.batch) * double(p.num_experts);
        return Cost{4.0 * n + double(p.batch) * double(p.top_k) * double(p.num_experts),
                    bytes(dt, n) + 8.0 * double(p.batch) * double(p.top_k)};
      },
      .cases = {
          {"b1_e8_k1_norm", Tier::Smoke, route(1, 8, 1, true)},
          {"b7_e8_k2_norm", Tier::Smoke, route(7, 8, 2, true)},
          {"b7_e8_k2_raw", Tier::Ci, route(7, 8, 2, false)},
          {"b33_e8_k8_norm", Tier::Ci, route(33, 8, 8, true)},  // every expert chosen: weights sum to 1
          {"b33_e8_k8_raw", Tier::Ci, route(33, 8, 8, false)},
          {"b1_e64_k1_raw", Tier::Ci, route(1, 64, 1, false)},
          {"b33_e64_k6_raw", Tier::Ci, route(33, 64, 6, false)},
          {"b7_e64_k8_norm", Tier::Ci, route(7, 64, 8, true)},
          {"b33_e128_k8_norm", Tier::Ci, route(33, 128, 8, true)},
          {"b7_e128_k8_raw", Tier::Ci, route(7, 128, 8, false)},
          {"b33_e128_k2_norm", Tier::Ci, route(33, 128, 2, true)},
          {"b5_e7_k3_norm", Tier::Ci, route(5, 7, 3, true)},  // counts no vector width divides
      },
      // Mixtral 8x7B: 8 experts, top 2, renormalised; Qwen3-30B-A3B: 128, top 8, renormalised;
      // DeepSeek-V2-Lite: 64, top 6, softmax weights as they are.
      .benches = {
          {"mixtral_8x7b_b1", Tier::Full, route(1, 8, 2, true)},
          {"mixtral_8x7b_b16", Tier::Full, route(16, 8, 2, true)},
          {"mixtral_8x7b_b512", Tier::Full, route(512, 8, 2, true)},
          {"qwen3_30b_a3b_b1", Tier::Full, route(1, 128, 8, true)},
          {"qwen3_30b_a3b_b16", Tier::Full, route(16, 128, 8, true)},
          {"qwen3_30b_a3b_b512", Tier::Full, route(512, 128, 8, true)},
          {"deepseek_v2_lite_b1", Tier::Full, route(1, 64, 6, false)},
          {"deepseek_v2_lite_b16", Tier::Full, route(16, 64, 6, false)},
          {"deepseek_v2_lite_b512", Tier::Full, route(512, 64, 6, false)},
      },
  });
  return op;
}

}  // namespace ts
