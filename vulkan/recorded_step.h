#pragma once
// The Vulkan form of a recorded step (core/recorded_step.h): one command buffer, recorded once and
// resubmitted per step, over the launches' own device buffers, the shared K/V pools and a small
// host-written state buffer.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "core/backend.h"
#include "vulkan/runtime/runtime.h"

namespace ts::vk {

// A tensor of a launch bound to another buffer than its own (a pool, or a shared input: the buffer of
// the node that wrote it), with that tensor's size.
struct BufferOverride {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize nbytes = 0;  // the data's bytes (the buffer holds the tensor's storage, guards included)
};
using BufferOverrides = std::map<std::string, BufferOverride, std::less<>>;

// What a recorded step needs of a prepared Vulkan launch.
class RecordableLaunch {
 public:
  virtual ~RecordableLaunch() = default;
  // The device buffer holding tensor `name`'s storage (guards, then data).
  virtual VkBuffer buffer(const std::string& name) const = 0;
  // The descriptor sets and storage-buffer descriptors record_dispatches allocates.
  virtual std::pair<uint32_t, uint32_t> descriptor_counts() const = 0;
  // The launch's dispatches into `cb`, a barrier between consecutive ones, descriptor sets from
  // `pool`, the tensors of `overrides` bound to those buffers. The caller orders the first dispatch
  // after whatever wrote its inputs.
  virtual void record_dispatches(VkCommandBuffer cb, VkDescriptorPool pool, const BufferOverrides& overrides) = 0;
  // Tensors `names` brought back from their device buffers into the launch's tensors (storage).
  virtual void download(const std::vector<std::string>& names) = 0;
};

std::unique_ptr<RecordedStep> record_vulkan_step(Context& ctx, const StepRecording& r);

}  // namespace ts::vk
