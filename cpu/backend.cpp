#include "cpu/backend.h"

#include "core/host_backend.h"

namespace ts {

std::unique_ptr<Backend> CpuBackend::create() {
  KernelTable k;
  return std::make_unique<HostBackend>(kName, std::move(k));
}

}  // namespace ts
