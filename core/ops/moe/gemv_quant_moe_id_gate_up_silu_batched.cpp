// gemv_quant_moe_id_gate_up_silu_batched: silu_out[p, :] = silu(gate) * up for the m * top_k pairs of
// gemv_quant_moe_id_batched (gate and up: that op against gate_w and up_w, unrounded in between).
#include "core/ops/describe.h"
#include "core/ops/moe/expert_gemv_def.h"

namespace ts {
using namespace describe;

const Op& op_gemv_quant_moe_id_gate_up_silu_batched() {
  using P = GemvQuantMoeIdBatchedParams;
  static const TypedOp<P> op(moe_experts::gemv_def<P>({
      .name = "gemv_quant_moe_id_gate_up_silu_batched",
      .summary = "silu_out[p,:] = silu(gate) * up of gemv_quant_moe_id_batched against gate_w and up_w",
      .silu = true,
      .check_fields = moe_experts::check_batched,
      .cases = moe_experts::batched_cases(),
      .benches = moe_experts::batched_benches(),
  }));
  return op;
}

}  // namespace ts
