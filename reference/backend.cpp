#include "reference/backend.h"

#include "core/host_backend.h"
#include "reference/kernels.h"

namespace ts {

std::unique_ptr<Backend> ReferenceBackend::create() { return std::make_unique<HostBackend>(kName, ref::kernels()); }

}  // namespace ts
