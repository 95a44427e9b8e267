#include "cpu/backend.h"

#include "core/host_backend.h"
#include "cpu/kernels.h"

namespace ts {

std::unique_ptr<Backend> CpuBackend::create() {
  KernelTable k;
  cpu::add_gemm(k);
  cpu::add_norms(k);
  cpu::add_elementwise(k);
  cpu::add_layout(k);
  cpu::add_rope(k);
  cpu::add_attention(k);
  cpu::add_argmax(k);
  return std::make_unique<HostBackend>(kName, std::move(k));
}

}  // namespace ts
