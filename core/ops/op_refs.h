#pragma once
// The op list as typed identities: ops::gemm is an OpRef<GemmParams> named "gemm", one per line of the
// families' X-macro lists. Backends register their kernels against these, never against a free
// string, so a misspelt or stale op name does not compile and a kernel's parameter struct is the op's.
#include <string_view>

#include "core/ops/core_params.h"
#include "core/ops/quant_params.h"
#include "core/ops/moe_params.h"
#include "core/ops/paged_params.h"
#include "core/ops/tensor_params.h"
#include "core/ops/collective_params.h"

namespace ts {

template <class P> struct OpRef {
  using Params = P;
  std::string_view name;
};

namespace ops {
#define X(name, P) inline constexpr OpRef<P> name{#name};
#include "core/ops/core_ops.inc"
#include "core/ops/quant_ops.inc"
#include "core/ops/moe_ops.inc"
#include "core/ops/paged_ops.inc"
#include "core/ops/kv_ops.inc"
#include "core/ops/tensor_ops.inc"
#include "core/ops/collective_ops.inc"
#undef X
}  // namespace ops

}  // namespace ts
