#include "reference/backend.h"

#include "core/host_backend.h"
#include "reference/reference.h"

namespace ts {

std::unique_ptr<Backend> ReferenceBackend::create() {
  KernelTable k;
#define X(name, P) k.add(ops::name, ref::name);
#include "core/ops/all_ops.inc"
#undef X
  return std::make_unique<HostBackend>(kName, std::move(k));
}

}  // namespace ts
