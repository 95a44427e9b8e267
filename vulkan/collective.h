#pragma once
// The collective family on Vulkan (vulkan/collective.cpp): no shader, the rank's buffers staged
// through host-visible memory around the process's world's collective.
#include <memory>

#include "core/backend.h"
#include "vulkan/runtime/runtime.h"

namespace ts::vk {

Support collective_support(const Problem& pr);
std::unique_ptr<Launch> prepare_collective(Context& ctx, const Problem& pr, TensorMap& io);

}  // namespace ts::vk
