// gemv_quant_moe_id_gate_up_silu_batched: silu_out[p, :] = silu(gate) * up for the m * top_k pairs of
// gemv_quant_moe_id_batched (gate and up: that op against gate_w and up_w, unrounded in between).
#include "core/ops/describe.h"
#include "core/ops/moe/experts_common.h"
#include "reference/reference.h"

namespace ts {
using namespace describe;

const Op& op_gemv_quant_moe_id_gate_up_silu_batched() {
  using P = GemvQuantMoeIdBatchedParams;
  static const TypedOp<P> op({
      .name = "gemv_quant_moe_id_gate_up_silu_batched",
      .family = "moe",
      .summary = "silu_out[p,:] = silu(gate) * up of gemv_quant_moe_id_batched against gate_w and up_w",
      .tensors = [](const P& p) {
        return std::vector{in("a", {p.a_len}), moe_experts::weights("gate_w", p.w), moe_experts::weights("up_w", p.w),
                           pinned(in("ids", {p.m * p.top_k}), DType::I32),
                           out("silu_out", {p.m * p.top_k, p.w.n_rows})};
      },
      .validate_params = [](const P& p) { moe_experts::check_batched(p, "gemv_quant_moe_id_gate_up_silu_batched"); },
      .validate_data = [](const P& p, const TensorMap& t) {
        moe_experts::check_plain_kind(p.w, t);
        moe_experts::check_expert_ids(t, "ids", 0, p.m * p.top_k, p.w.num_experts);
      },
      .infer = [](P& p, const TensorMap& t) {
        p.a_len = dim_of(t, "a", 1, 0);
        moe_experts::check_weight_bytes(t, "gate_w", p.w);
        moe_experts::check_weight_bytes(t, "up_w", p.w);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        moe_experts::fill_weights(p.w, t["gate_w"], r);
        moe_experts::fill_weights(p.w, t["up_w"], r);
        moe_experts::route(p.m, p.top_k, p.w.num_experts, t["ids"].as<int32_t>(), r);
      },
      .reference = ref::gemv_quant_moe_id_gate_up_silu_batched,
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return moe_experts::silu_product(dt, p.w, in); },
      .cost = [](const P& p, DType dt) {
        return moe_experts::cost(p.w, dt, 2, moe_experts::selected_experts(p.w.num_experts, p.top_k, p.m), p.m * p.top_k,
                                 p.src1_inner_stride == 0 ? p.m : p.m * p.top_k);
      },
      .cases = moe_experts::batched_cases(),
      .benches = moe_experts::batched_benches(),
  });
  return op;
}

}  // namespace ts
