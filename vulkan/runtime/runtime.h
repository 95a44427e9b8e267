#pragma once
// The Vulkan runtime: one instance, device and compute queue per process, device buffers with
// host-visible staging, one-shot command submission, and the validation messages collected for the
// op that caused them.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "core/error.h"

namespace ts::vk {

// Turns a failed VkResult into an Error naming the call ("vkCreateBuffer: VK_ERROR_OUT_OF_DEVICE_MEMORY").
void vk_check(VkResult r, const char* call);
#define TS_VK(expr) ::ts::vk::vk_check((expr), #expr)
const char* result_name(VkResult r);

struct DeviceInfo {
  std::string name;
  VkPhysicalDeviceProperties props{};
  uint32_t subgroup_size = 0;
  bool subgroup_arithmetic = false;  // KHR arithmetic + basic in the compute stage
  bool storage16 = false;            // storageBuffer16BitAccess: F16 / BF16 tensors
  bool int16 = false;                // shaderInt16
  bool float16 = false;              // shaderFloat16 (VK_KHR_shader_float16_int8): F16 arithmetic
  // shaderIntegerDotProduct (VK_KHR_shader_integer_dot_product): packed 4 x int8 dot products (the
  // int8 decode GEMV); `int_dot_fast` where the driver says the signed-by-unsigned packed form is
  // accelerated (a dp4a instruction rather than four multiplies).
  bool int_dot = false;
  bool int_dot_fast = false;
  bool timestamps = false;
  uint32_t timestamp_bits = 0;
  double timestamp_period_ns = 1;
};

class Context {
 public:
  // Throws Error with the reason when there is no usable device (the backend reports it unavailable).
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return family_; }
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }
  VkCommandPool command_pool() const { return pool_; }
  const DeviceInfo& info() const { return info_; }
  bool validation() const { return messenger_ != VK_NULL_HANDLE; }

  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) const;

  // Validation messages of severity warning or error since the last call, joined; empty when none.
  std::string take_messages();
  // Throws Error quoting the validation messages (if any) raised while doing `what`.
  void check_messages(const std::string& what);
  void add_message(std::string m);

  // Records with `record`, submits, waits on a fence.
  template <class F> void submit_and_wait(F&& record) {
    VkCommandBuffer cb = begin_one_shot();
    record(cb);
    end_one_shot(cb);
  }
  VkCommandBuffer begin_one_shot();
  void end_one_shot(VkCommandBuffer cb);
  // A primary command buffer from the context's pool, begun for recording once and submitting many
  // times (a launch, a recorded step); its owner ends it and frees it.
  VkCommandBuffer begin_reusable();
  void submit(VkCommandBuffer cb);  // a pre-recorded buffer, waited on

 private:
  void release();
  VkCommandBuffer begin(VkCommandBufferUsageFlags usage);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice phys_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkPhysicalDeviceMemoryProperties mem_{};
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  DeviceInfo info_;
  std::mutex mu_;
  std::vector<std::string> messages_;
};

// A buffer and its memory. Device-local ones are the tensors; host-visible ones stage copies.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Context& ctx, VkDeviceSize bytes, bool host_visible);
  ~Buffer();
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer get() const { return buf_; }
  VkDeviceSize size() const { return size_; }
  void* mapped() const { return map_; }

 private:
  Context* ctx_ = nullptr;
  VkBuffer buf_ = VK_NULL_HANDLE;
  VkDeviceMemory mem_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  void* map_ = nullptr;
};

// The pools a recorded command buffer draws on: storage-buffer descriptors for `sets` sets of
// `descriptors` bindings in all, and (where the device has timestamps, else VK_NULL_HANDLE) a pool of
// the two timestamps around the work. The caller destroys them.
VkDescriptorPool create_descriptor_pool(Context& ctx, uint32_t sets, uint32_t descriptors);
VkQueryPool create_timestamp_pool(Context& ctx);
// Submits `cb` and waits for it; any validation message raised meanwhile is an Error naming `what`.
// Returns the work's seconds: between the pool's two timestamps where there is one, else the wall time
// of the submit and wait.
double submit_timed(Context& ctx, VkCommandBuffer cb, VkQueryPool timestamps, const std::string& what);

}  // namespace ts::vk
