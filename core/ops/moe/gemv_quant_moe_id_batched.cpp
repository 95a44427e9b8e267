// gemv_quant_moe_id_batched: m * top_k pairs in one launch; pair p reads
// a[(p / top_k) * src1_outer_stride + (p % top_k) * src1_inner_stride ..][:n_cols] against expert ids[p]
// into out[p, :]. `a` is a flat buffer of a_len elements (inferred).
#include "core/ops/describe.h"
#include "core/ops/moe/experts_common.h"
#include "reference/reference.h"

namespace ts {
using namespace describe;

const Op& op_gemv_quant_moe_id_batched() {
  using P = GemvQuantMoeIdBatchedParams;
  static const TypedOp<P> op({
      .name = "gemv_quant_moe_id_batched",
      .family = "moe",
      .summary = "out[p,:] = a[(p/top_k)*outer + (p%top_k)*inner ..] @ dequant(weights[ids[p]])^T, p < m*top_k",
      .tensors = [](const P& p) {
        return std::vector{in("a", {p.a_len}), moe_experts::weights("weights", p.w),
                           pinned(in("ids", {p.m * p.top_k}), DType::I32), out("out", {p.m * p.top_k, p.w.n_rows})};
      },
      .validate_params = [](const P& p) { moe_experts::check_batched(p, "gemv_quant_moe_id_batched"); },
      .validate_data = [](const P& p, const TensorMap& t) {
        moe_experts::check_plain_kind(p.w, t);
        moe_experts::check_expert_ids(t, "ids", 0, p.m * p.top_k, p.w.num_experts);
      },
      .infer = [](P& p, const TensorMap& t) {
        p.a_len = dim_of(t, "a", 1, 0);
        moe_experts::check_weight_bytes(t, "weights", p.w);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        moe_experts::fill_weights(p.w, t["weights"], r);
        moe_experts::route(p.m, p.top_k, p.w.num_experts, t["ids"].as<int32_t>(), r);
      },
      .reference = ref::gemv_quant_moe_id_batched,
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return moe_experts::dot(dt, p.w, in); },
      .cost = [](const P& p, DType dt) {
        return moe_experts::cost(p.w, dt, 1, moe_experts::selected_experts(p.w.num_experts, p.top_k, p.m), p.m * p.top_k,
                                 p.src1_inner_stride == 0 ? p.m : p.m * p.top_k);
      },
      .cases = moe_experts::batched_cases(),
      .benches = moe_experts::batched_benches(),
  });
  return op;
}

}  // namespace ts
