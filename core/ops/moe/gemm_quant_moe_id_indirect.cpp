// gemm_quant_moe_id_indirect: gemm_quant_moe_id whose dispatch grid the backend derives from tpe on
// the device (the seed's args_buf); that grid is the backend's, not part of the case, so the case is
// gemm_quant_moe_id's.
#include "core/ops/moe/experts_common.h"

namespace ts {

const Op& op_gemm_quant_moe_id_indirect() {
  static const TypedOp<GemmQuantMoeIdParams> op(moe_experts::gemm_def(
      "gemm_quant_moe_id_indirect", "gemm_quant_moe_id with the dispatch grid derived on the device from tpe"));
  return op;
}

}  // namespace ts
