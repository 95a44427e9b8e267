// weighted_sum_batched: out[b, h] = sum_k weights[b, k] * slots[b, k, h], the prefill combine of each
// token's top_k expert outputs. slots [batch, top_k, hidden], weights F32 [batch, top_k] -> out
// [batch, hidden].
#include "core/ops/moe/moe_inputs.h"
#include "core/ops/moe_params.h"

namespace ts {
using namespace describe;

const Op& op_weighted_sum_batched() {
  using P = WeightedSumBatchedParams;
  static const TypedOp<P> op({
      .name = "weighted_sum_batched",
      .family = "moe",
      .summary = "out[b, :] = sum_k weights[b, k] * slots[b, k, :]",
      .tensors = [](const P& p) {
        return std::vector{in("slots", {p.batch, p.top_k, p.hidden}),
                           pinned(in("weights", {p.batch, p.top_k}), DType::F32), out("out", {p.batch, p.hidden})};
      },
      .validate_params = [](const P& p) {
        positive(p.batch, "batch");
        positive(p.top_k, "top_k");
        positive(p.hidden, "hidden");
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["slots"], r);
        combine_weights(t["weights"], p.batch, p.top_k, r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return combine_tolerance(dt, p.top_k, in); },
      .cost = [](const P& p, DType dt) {
        const double n = double(p.batch) * double(p.top_k) * double(p.hidden);
        return Cost{2.0 * n, bytes(dt, n + double(p.batch) * double(p.hidden)) + 4.0 * double(p.batch * p.top_k)};
      },
      .cases = {
          {"b1_k1_h1", Tier::Smoke, {1, 1, 1}},
          {"b7_k2_h7", Tier::Smoke, {7, 2, 7}},
          {"b33_k8_h33", Tier::Ci, {33, 8, 33}},
          {"b7_k6_h257", Tier::Ci, {7, 6, 257}},
          {"b33_k2_h1000", Tier::Ci, {33, 2, 1000}},
          {"qwen3_30b_a3b_b16_k8_h2048", Tier::Ci, {16, 8, 2048}},
          {"mixtral_8x7b_b7_k2_h4096", Tier::Full, {7, 2, 4096}},
      },
      .benches = {
          {"mixtral_8x7b_b16", Tier::Full, {16, 2, 4096}},
          {"mixtral_8x7b_b512", Tier::Full, {512, 2, 4096}},
          {"qwen3_30b_a3b_b16", Tier::Full, {16, 8, 2048}},
          {"qwen3_30b_a3b_b512", Tier::Full, {512, 8, 2048}},
          {"deepseek_v2_lite_b16", Tier::Full, {16, 6, 2048}},
          {"deepseek_v2_lite_b512", Tier::Full, {512, 6, 2048}},
      },
  });
  return op;
}

}  // namespace ts
