// The collective family on Vulkan: this rank's x and out in device-local buffers (the whole storage,
// guards included, as every other op's), staged through a host-visible buffer of each around the host
// collective (core/collective.h). Every copy is a transfer after a barrier on the earlier transfers,
// submitted and waited on, so the host reads only what the device finished writing.
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
      device_.emplace(name, Buffer(ctx_, bytes, false));
      host_.emplace(name, Buffer(ctx_, bytes, true));
      upload(name);
    }
    ctx_.check_messages("preparing a collective");
    agree();
  }

 private:
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
    copy(name, 0, t.storage_bytes(), true);
  }
  void download(const std::string& name) override {
    Tensor& t = io_.at(name);
    copy(name, 0, t.storage_bytes(), false);
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
  std::map<std::string, Buffer> device_, host_;
};

}  // namespace

Support collective_support(const Problem& pr) { return device_collective_support(pr, "Vulkan collective"); }

std::unique_ptr<Launch> prepare_collective(Context& ctx, const Problem& pr, TensorMap& io) {
  return std::make_unique<VkCollectiveLaunch>(ctx, pr, io);
}

}  // namespace ts::vk
