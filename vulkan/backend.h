#pragma once
// The Vulkan backend: GLSL compute shaders (vulkan/shaders/) on any Vulkan 1.1 device with a compute
// queue, lavapipe included. Device: TOUCHSTONE_VULKAN_DEVICE (an index or a name substring).
// Validation: the Khronos layer is on when installed unless TOUCHSTONE_VULKAN_VALIDATION=0; any
// warning or error it reports fails the op that caused it.
#include <memory>

#include "core/backend.h"

namespace ts {

struct VulkanBackend {
  static constexpr const char* kName = "vulkan";
  static std::unique_ptr<Backend> create();
};

}  // namespace ts
