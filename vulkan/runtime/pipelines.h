#pragma once
// Compute pipelines built from the embedded SPIR-V variants, once per process (through the
// VkPipelineCache), each with a layout of N storage buffers and a 128-byte push-constant block,
// and per set of specialization-constant values.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vulkan/runtime/runtime.h"

namespace ts::vk {

inline constexpr uint32_t kPushBytes = 128;  // the minimum maxPushConstantsSize every device has

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t bindings = 0;
};

class Pipelines {
 public:
  explicit Pipelines(Context& ctx) : ctx_(ctx) {}
  ~Pipelines();
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;
  // The pipeline of SPIR-V variant `name` with `bindings` storage buffers, specialised with
  // constant_id i = spec[i] (none: the shader's defaults); Error when unknown.
  const Pipeline& get(const std::string& name, uint32_t bindings, const std::vector<uint32_t>& spec = {});

 private:
  VkDescriptorSetLayout set_layout(uint32_t bindings);

  Context& ctx_;
  std::map<uint32_t, VkDescriptorSetLayout> set_layouts_;
  std::map<uint32_t, VkPipelineLayout> layouts_;
  std::map<std::pair<std::string, std::vector<uint32_t>>, Pipeline> pipelines_;  // by (variant, spec)
};

}  // namespace ts::vk
