// The catalog: every described op, in docs/catalog.md order. Each op's description lives in
// core/ops/<family>/<op>.cpp and is reached through op_<name>().
#include "core/op.h"
#include "core/ops/all_params.h"

namespace ts {

#define X(name, P) const Op& op_##name();
#include "core/ops/all_ops.inc"
#undef X

const std::vector<const Op*>& all_ops() {
  static const std::vector<const Op*> ops = {
#define X(name, P) &op_##name(),
#include "core/ops/all_ops.inc"
#undef X
  };
  return ops;
}

}  // namespace ts
