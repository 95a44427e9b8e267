// gemv_quant_moe_id_batched: m * top_k pairs in one launch; pair p reads
// a[(p / top_k) * src1_outer_stride + (p % top_k) * src1_inner_stride ..][:n_cols] against expert ids[p]
// into out[p, :]. `a` is a flat buffer of a_len elements (inferred).
#include "core/ops/describe.h"
#include "core/ops/moe/expert_gemv_def.h"

namespace ts {
using namespace describe;

const Op& op_gemv_quant_moe_id_batched() {
  using P = GemvQuantMoeIdBatchedParams;
  static const TypedOp<P> op(moe_experts::gemv_def<P>({
      .name = "gemv_quant_moe_id_batched",
      .summary = "out[p,:] = a[(p/top_k)*outer + (p%top_k)*inner ..] @ dequant(weights[ids[p]])^T, p < m*top_k",
      .check_fields = moe_experts::check_batched,
      .cases = moe_experts::batched_cases(),
      .benches = moe_experts::batched_benches(),
  }));
  return op;
}

}  // namespace ts
