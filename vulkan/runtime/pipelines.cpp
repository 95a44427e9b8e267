#include "vulkan/runtime/pipelines.h"

#include <cstring>
#include <vector>

#include "vulkan/runtime/shader_table.h"

namespace ts::vk {

Pipelines::~Pipelines() {
  VkDevice d = ctx_.device();
  for (auto& [key, p] : pipelines_) vkDestroyPipeline(d, p.pipeline, nullptr);
  for (auto& [n, l] : layouts_) vkDestroyPipelineLayout(d, l, nullptr);
  for (auto& [n, l] : set_layouts_) vkDestroyDescriptorSetLayout(d, l, nullptr);
}

VkDescriptorSetLayout Pipelines::set_layout(uint32_t bindings) {
  auto it = set_layouts_.find(bindings);
  if (it != set_layouts_.end()) return it->second;
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i)
    b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.bindingCount = bindings;
  ci.pBindings = b.data();
  VkDescriptorSetLayout l;
  TS_VK(vkCreateDescriptorSetLayout(ctx_.device(), &ci, nullptr, &l));
  set_layouts_[bindings] = l;

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pci.setLayoutCount = 1;
  pci.pSetLayouts = &l;
  pci.pushConstantRangeCount = 1;
  pci.pPushConstantRanges = &range;
  VkPipelineLayout pl;
  TS_VK(vkCreatePipelineLayout(ctx_.device(), &pci, nullptr, &pl));
  layouts_[bindings] = pl;
  return l;
}

const Pipeline& Pipelines::get(const std::string& name, uint32_t bindings, const std::vector<uint32_t>& spec) {
  auto key = std::make_pair(name, spec);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) {
    check(it->second.bindings == bindings, "shader {} bound with {} buffers, built with {}", name, bindings,
          it->second.bindings);
    return it->second;
  }
  const ShaderBlob* blob = nullptr;
  for (const auto& b : shader_blobs())
    if (name == b.name) blob = &b;
  check(blob != nullptr, "no SPIR-V variant named '{}' in the Vulkan backend", name);

  Pipeline p;
  p.bindings = bindings;
  p.set_layout = set_layout(bindings);
  p.layout = layouts_.at(bindings);
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = blob->bytes;
  smi.pCode = blob->words;
  VkShaderModule mod;
  TS_VK(vkCreateShaderModule(ctx_.device(), &smi, nullptr, &mod));
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = mod;
  ci.stage.pName = "main";
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, 4 * i, 4};
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), 4 * spec.size(), spec.data()};
  if (!spec.empty()) ci.stage.pSpecializationInfo = &si;
  ci.layout = p.layout;
  const VkResult r = vkCreateComputePipelines(ctx_.device(), ctx_.pipeline_cache(), 1, &ci, nullptr, &p.pipeline);
  vkDestroyShaderModule(ctx_.device(), mod, nullptr);
  vk_check(r, "vkCreateComputePipelines");
  ctx_.check_messages("building pipeline " + name);
  return pipelines_[std::move(key)] = p;
}

}  // namespace ts::vk
