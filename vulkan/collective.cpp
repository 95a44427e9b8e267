// The collective family on Vulkan: this rank's x and out in buffers of the whole storage, guards
// included, as every other op's. Where the host-visible memory is the device's own (DEVICE_LOCAL as
// well: lavapipe, an integrated GPU, a discrete one's resizable BAR) the tensors live in host-visible,
// coherent buffers, mapped for good, and the host collective runs on them: no copy. Elsewhere they are
// device-local buffers staged through a host-visible buffer of each around the host collective
// (core/collective.h): every copy a transfer after a barrier on the earlier transfers, submitted and
// waited on, so the host reads only what the device finished writing.
#include "vulkan/collective.h"

#include <cstring>
#include <map>

#include "core/collective.h"

namespace ts::vk {

namespace {

class VkCollectiveLaunch final : public StagedCollectiveLaunch {
 public:
  VkCollectiveLaunch(Context& ctx, const Problem& pr, TensorMap& io) : StagedCollectiveLaunch(pr, io), ctx_(ctx) {
    ctx_.take_messages();  // an earlier failure's messages are not this launch's
    for (const std::string& name : {x_name(), out_name()}) {
      const VkDeviceSize bytes = io_.at(name).storage_bytes();
      host_.emplace(name, Buffer(ctx_, bytes, true));
      if (name == x_name()) maps_ = !collective_staging_forced() && device_local(host_.at(name));
      if (!maps_) device_.emplace(name, Buffer(ctx_, bytes, false));
      upload(name);
    }
    ctx_.check_messages("preparing a collective");
    agree();
  }
  bool maps() const override { return maps_; }

 private:
  // Whether the memory the host-visible buffer got is device-local too: the type Buffer chose for it
  // (host-visible and coherent, cached where there is such a type), asked again whether it is.
  bool device_local(const Buffer& b) const {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx_.device(), b.get(), &req);
    const uint32_t type = ctx_.memory_type(req.memoryTypeBits,
                                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                           VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    try {
      (void)ctx_.memory_type(1u << type, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
      return true;
    } catch (const Error&) {
      return false;
    }
  }
  // Mapped for good and coherent: every command that wrote it was waited on, so the host sees it.
  void* map_data(const std::string& name, size_t, bool) override { return mapped(name) + kGuardBytes; }

  // `bytes` from `offset` of the tensor's storage: host-visible -> device (to_device) or back.
  void copy(const std::string& name, VkDeviceSize offset, VkDeviceSize bytes, bool to_device) {
    if (bytes == 0) return;
    Buffer &dev = device_.at(name), &host = host_.at(name);
    ctx_.submit_and_wait([&](VkCommandBuffer cb) {
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, nullptr, 0,
                           nullptr);
      const VkBufferCopy c{offset, offset, bytes};
      if (to_device) vkCmdCopyBuffer(cb, host.get(), dev.get(), 1, &c);
      else vkCmdCopyBuffer(cb, dev.get(), host.get(), 1, &c);
    });
  }
  char* mapped(const std::string& name) { return static_cast<char*>(host_.at(name).mapped()); }

  void upload(const std::string& name) override {
    const Tensor& t = io_.at(name);
    std::memcpy(mapped(name), t.storage(), t.storage_bytes());
    if (!maps_) copy(name, 0, t.storage_bytes(), true);
  }
  void download(const std::string& name) override {
    Tensor& t = io_.at(name);
    if (!maps_) copy(name, 0, t.storage_bytes(), false);
    std::memcpy(t.storage(), mapped(name), t.storage_bytes());
    ctx_.check_messages("downloading a collective's output");
  }
  void read_data(const std::string& name, void* host, size_t bytes) override {
    copy(name, kGuardBytes, bytes, false);
    if (bytes) std::memcpy(host, mapped(name) + kGuardBytes, bytes);
  }
  void write_data(const std::string& name, const void* host, size_t bytes) override {
    if (bytes) std::memcpy(mapped(name) + kGuardBytes, host, bytes);
    copy(name, kGuardBytes, bytes, true);
  }

  Context& ctx_;
  bool maps_ = false;
  std::map<std::string, Buffer> device_, host_;  // device_: only where the launch stages
};

}  // namespace

Support collective_support(const Problem& pr) { return device_collective_support(pr, "Vulkan collective"); }

std::unique_ptr<Launch> prepare_collective(Context& ctx, const Problem& pr, TensorMap& io) {
  return std::make_unique<VkCollectiveLaunch>(ctx, pr, io);
}

}  // namespace ts::vk
