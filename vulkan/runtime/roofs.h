#pragma once
// The device roofs on Vulkan: the case (sized for the device) and the dispatches that run it.
#include <string>
#include <vector>

#include "core/device_roofs.h"
#include "vulkan/plan.h"

namespace ts::vk {

struct RoofPlan {
  RoofCase c;
  std::vector<Dispatch> dispatches;
  std::string detail;  // sizes, for the benchmark's label
};

// `cpu_device`: a CPU driver (lavapipe), whose streams are the host's memory.
RoofPlan plan_roof(Roof r, const Target& tg, bool cpu_device);

}  // namespace ts::vk
