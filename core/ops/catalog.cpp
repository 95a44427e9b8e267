// The catalog: every described op, in docs/catalog.md order. Each op's description lives in
// core/ops/<family>/<op>.cpp and is reached through op_<name>().
#include "core/op.h"
#include "core/ops/core_params.h"
#include "core/ops/quant_params.h"
#include "core/ops/moe_params.h"
#include "core/ops/paged_params.h"
#include "core/ops/tensor_params.h"
#include "core/ops/collective_params.h"

namespace ts {

#define X(name, P) const Op& op_##name();
#include "core/ops/core_ops.inc"
#include "core/ops/quant_ops.inc"
#include "core/ops/moe_ops.inc"
#include "core/ops/paged_ops.inc"
#include "core/ops/kv_ops.inc"
#include "core/ops/tensor_ops.inc"
#include "core/ops/collective_ops.inc"
#undef X

const std::vector<const Op*>& all_ops() {
  static const std::vector<const Op*> ops = {
#define X(name, P) &op_##name(),
#include "core/ops/core_ops.inc"
#include "core/ops/quant_ops.inc"
#include "core/ops/moe_ops.inc"
#include "core/ops/paged_ops.inc"
#include "core/ops/kv_ops.inc"
#include "core/ops/tensor_ops.inc"
#include "core/ops/collective_ops.inc"
#undef X
  };
  return ops;
}

}  // namespace ts
