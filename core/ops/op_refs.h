#pragma once
// The op list as typed identities: ops::gemm is an OpRef<GemmParams> named "gemm", one per line of the
// families' X-macro lists. Backends register their kernels against these, never against a free
// string, so a misspelt or stale op name does not compile and a kernel's parameter struct is the op's.
#include <string_view>

#include "core/ops/all_params.h"

namespace ts {

template <class P> struct OpRef {
  using Params = P;
  std::string_view name;
};

namespace ops {
#define X(name, P) inline constexpr OpRef<P> name{#name};
#include "core/ops/all_ops.inc"
#undef X
}  // namespace ops

}  // namespace ts
