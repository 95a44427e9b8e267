#include "reference/kernels.h"

#include "core/error.h"
#include "reference/reference.h"

namespace ts::ref {

KernelTable& detail::table() {
  static KernelTable table = [] {
    KernelTable k;
#define X(name, P) k.add(ops::name, ref::name);
#include "core/ops/all_ops.inc"
#undef X
    return k;
  }();
  return table;
}

const KernelTable& kernels() { return detail::table(); }

void run(const Op& op, const Params& p, TensorMap& t) {
  const KernelTable::Entry* e = kernels().find(op.name());
  check(e != nullptr && e->run, "the reference has no kernel for op {}", op.name());
  e->run(p, t);
}

}  // namespace ts::ref
