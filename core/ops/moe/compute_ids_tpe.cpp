// compute_ids_tpe: the per-expert bucket sort of the routed pairs. selected_ids I32 [batch, top_k] ->
// tpe I32 [E] (pairs per expert) and ids I32 [E, batch*top_k], whose row e lists the pair ids
// t*top_k + s routed to expert e, ascending; slots past tpe[e] are left unwritten (not compared).
#include "core/ops/moe/moe_inputs.h"
#include "core/ops/moe_params.h"

namespace ts {
using namespace describe;

namespace {
ComputeIdsTpeParams bucket(int64_t batch, int64_t num_experts, int64_t top_k) { return {batch, num_experts, top_k}; }

int64_t pairs(const ComputeIdsTpeParams& p) { return checked::mul(p.batch, p.top_k, "batch * top_k"); }
}  // namespace

const Op& op_compute_ids_tpe() {
  static const TypedOp<ComputeIdsTpeParams> op({
      .name = "compute_ids_tpe",
      .family = "moe",
      .summary = "tpe[e] = pairs routed to e; ids[e, :tpe[e]] = their pair ids t*top_k + s, ascending",
      .tensors = [](const ComputeIdsTpeParams& p) {
        return std::vector{pinned(in("selected_ids", {p.batch, p.top_k}), DType::I32),
                           pinned(out("tpe", {p.num_experts}), DType::I32),
                           pinned(out("ids", {p.num_experts, pairs(p)}), DType::I32)};
      },
      .validate_params = [](const ComputeIdsTpeParams& p) {
        positive(p.batch, "batch");
        positive(p.num_experts, "num_experts");
        positive(p.top_k, "top_k");
        top_k_fits("compute_ids_tpe", p.top_k, p.num_experts);
        check(pairs(p) <= INT32_MAX, "compute_ids_tpe: batch * top_k = {} does not fit an I32 pair id", pairs(p));
      },
      .validate_data = [](const ComputeIdsTpeParams& p, const TensorMap& t) {
        experts_in_range("compute_ids_tpe", t, "selected_ids", p.num_experts);
      },
      .generate = [](const ComputeIdsTpeParams& p, TensorMap& t, Rng& r) {
        expert_choices(t["selected_ids"], p.batch, p.top_k, p.num_experts, r);
      },
      .tolerance = [](const ComputeIdsTpeParams&, DType, const TensorMap&) { return Tolerance{0, 0, "counts and indices: exact"}; },
      .outputs = {{"ids", {},
                   [](const ComputeIdsTpeParams& p, const TensorMap&, const TensorMap& expected,
                      std::vector<uint8_t>& mask) {
                     const int32_t* tpe = expected.at("tpe").as<int32_t>();
                     const int64_t row = pairs(p);
                     for (int64_t e = 0; e < p.num_experts; ++e)
                       for (int64_t j = tpe[e]; j < row; ++j) mask[static_cast<size_t>(e * row + j)] = 0;
                   }}},
      .cost = [](const ComputeIdsTpeParams& p, DType) {
        const double n = double(p.batch) * double(p.top_k);
        return Cost{n, 4.0 * (2.0 * n + double(p.num_experts))};  // read each id, write each pair id once
      },
      // Tokens cycle through hot experts, the lower half and the last expert (moe_inputs.h): experts
      // with many pairs and with none.
      .cases = {
          {"b1_e8_k1", Tier::Smoke, bucket(1, 8, 1), kIndexOnly},
          {"b7_e8_k2", Tier::Smoke, bucket(7, 8, 2), kIndexOnly},
          {"b33_e8_k8", Tier::Ci, bucket(33, 8, 8), kIndexOnly},
          {"b7_e64_k6", Tier::Ci, bucket(7, 64, 6), kIndexOnly},
          {"b33_e64_k1", Tier::Ci, bucket(33, 64, 1), kIndexOnly},
          {"b1_e128_k8", Tier::Ci, bucket(1, 128, 8), kIndexOnly},  // 120 experts with no pair
          {"b33_e128_k8", Tier::Ci, bucket(33, 128, 8), kIndexOnly},
          {"b7_e128_k2", Tier::Ci, bucket(7, 128, 2), kIndexOnly},
      },
      .benches = {
          {"mixtral_8x7b_b16", Tier::Full, bucket(16, 8, 2), kIndexOnly},
          {"mixtral_8x7b_b512", Tier::Full, bucket(512, 8, 2), kIndexOnly},
          {"qwen3_30b_a3b_b16", Tier::Full, bucket(16, 128, 8), kIndexOnly},
          {"qwen3_30b_a3b_b512", Tier::Full, bucket(512, 128, 8), kIndexOnly},
          {"deepseek_v2_lite_b16", Tier::Full, bucket(16, 64, 6), kIndexOnly},
          {"deepseek_v2_lite_b512", Tier::Full, bucket(512, 64, 6), kIndexOnly},
      },
  });
  return op;
}

}  // namespace ts
