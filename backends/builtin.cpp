// Registers the backends this build includes, in the order the matrix and the CLI list them.
#include "core/backend.h"
#include "reference/backend.h"
#if TOUCHSTONE_HAVE_CPU
#include "cpu/backend.h"
#endif
#if TOUCHSTONE_HAVE_OPENCL
#include "opencl/backend.h"
#endif
#if TOUCHSTONE_HAVE_VULKAN
#include "vulkan/backend.h"
#endif

namespace ts {

void register_builtin_backends() {
  register_backend<ReferenceBackend>();
#if TOUCHSTONE_HAVE_CPU
  register_backend<CpuBackend>();
#endif
#if TOUCHSTONE_HAVE_OPENCL
  register_backend<OpenclBackend>();
#endif
#if TOUCHSTONE_HAVE_VULKAN
  register_backend<VulkanBackend>();
#endif
}

}  // namespace ts
