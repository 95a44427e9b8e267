// A whole step of Vulkan launches as one command buffer, recorded once and resubmitted per step.
//
// Per step the host writes the state words into a small host-visible buffer (write_state); the
// command buffer copies them into the nodes' index tensors (token id, positions, block tables,
// context lengths) on the device, so every per-step scalar a kernel uses is read from device memory
// and nothing about a step is baked into the recording (push constants hold shapes only: the plans
// never read tensor values). A node's whole inputs are the buffers of the nodes that wrote them,
// bound in its descriptors (shares); its other inputs (parts of a tensor, in-out tensors) are copied
// from those buffers. The K/V pools are one device buffer each, bound directly by every node that
// uses them, and stay on the device between steps. A replay is one submit, one fence wait and the output's bytes
// read from a host-visible buffer the command buffer copied them into.
#include "vulkan/recorded_step.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/error.h"

namespace ts::vk {
namespace {

// The barriers of the recording, one helper so each call site says what it orders and why.
void barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
             VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

class VulkanRecordedStep final : public RecordedStep {
 public:
  VulkanRecordedStep(Context& ctx, const StepRecording& r) : ctx_(ctx) {
    try {
      build(r);
    } catch (...) {
      release();
      throw;
    }
  }
  ~VulkanRecordedStep() override { release(); }

  void write_state(std::span<const uint32_t> words) override {
    check(words.size() == state_words_, "vulkan: a recorded step reads {} state words, given {}", state_words_,
          words.size());
    // Host-coherent memory: the write is visible to the device at the next vkQueueSubmit (the
    // queue submit's implicit host-write dependency), which is the replay's.
    std::memcpy(state_.mapped(), words.data(), words.size_bytes());
  }

  void replay(Tensor& out) override {
    check(out.storage_bytes() == output_bytes_, "vulkan: the recorded step's output is {} bytes, its tensor {}",
          output_bytes_, out.storage_bytes());
    seconds_ = submit_timed(ctx_, cb_, queries_, "replaying a recorded step");
    // The fence wait made the transfer's writes, made visible to the host by the recording's last
    // barrier, readable here.
    std::memcpy(out.storage(), readback_.mapped(), output_bytes_);
  }

  double last_seconds() const override { return seconds_; }

  void upload_pools(std::span<Tensor* const> pools) override { move_pools(pools, true); }
  void download_pools(std::span<Tensor* const> pools) override { move_pools(pools, false); }

  void download_nodes() override {
    for (auto& [launch, names] : node_tensors_) launch->download(names);
  }

 private:
  void build(const StepRecording& r) {
    ctx_.take_messages();  // an earlier failure's messages are not the recording's
    state_words_ = r.state.size();
    state_ = Buffer(ctx_, std::max<VkDeviceSize>(4, r.state.size() * 4), true);
    std::memcpy(state_.mapped(), r.state.data(), r.state.size() * 4);
    for (const Tensor* p : r.pools) {
      pool_bytes_.push_back(p->storage_bytes());
      pools_.emplace_back(ctx_, p->storage_bytes(), false);
    }
    move_pools(r.pools, true);

    std::vector<RecordableLaunch*> launches;
    uint32_t sets = 0, descriptors = 0;
    for (const StepRecording::Node& n : r.nodes) {
      auto* l = dynamic_cast<RecordableLaunch*>(n.launch);
      check(l != nullptr, "vulkan: a recorded step's launch was not prepared by the Vulkan backend");
      launches.push_back(l);
      const auto [s, ds] = l->descriptor_counts();
      sets += s, descriptors += ds;
    }
    descriptor_pool_ = create_descriptor_pool(ctx_, sets, descriptors);
    queries_ = create_timestamp_pool(ctx_);
    RecordableLaunch* out_launch = launches.at(static_cast<size_t>(r.output_node));
    output_bytes_ = r.output_bytes;
    readback_ = Buffer(ctx_, output_bytes_, true);

    cb_ = ctx_.begin_reusable();
    // A barrier's first scope holds every command submitted before it on the queue: the previous
    // replay, the pools' upload, the launches' own uploads. Their transfer and shader writes are
    // made visible to this step's copies and dispatches, and their reads of the buffers this step
    // overwrites (the nodes' inputs, the pools) happen before (write after read needs only this
    // execution dependency). The host's state write needs none: the queue submit orders it.
    barrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                VK_ACCESS_SHADER_WRITE_BIT);
    if (queries_) {
      vkCmdResetQueryPool(cb_, queries_, 0, 2);
      vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
    }
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      const StepRecording::Node& n = r.nodes[i];
      RecordableLaunch& l = *launches[i];
      if (!n.copies.empty()) {
        // The copies read tensors the earlier nodes' dispatches wrote: their shader writes before
        // these transfer reads. (A copy's destination is this node's own input, which no dispatch
        // before this node's reads in this step: no write-after-read inside the step.)
        barrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_TRANSFER_READ_BIT);
        for (const StepRecording::Copy& c : n.copies) record_copy(r, launches, l, c);
      }
      // Before the node's first dispatch: its inputs the copies just wrote (transfer writes), and
      // the pools the previous node's dispatches wrote (the layer's rope node writes the K/V row its
      // attention node then reads), visible to its shader reads and writes (in-out tensors: the
      // residual stream is copied in, then added to in place). Inside the node, record_dispatches
      // puts a compute-to-compute barrier between consecutive dispatches. Lavapipe runs a group's
      // invocations one after another and a submitted command buffer's commands in order, so a missing barrier
      // here could pass on it: each is reasoned, not observed. The tests run with synchronization
      // validation on, which does see the command buffer: without this barrier it reports a
      // read-after-write hazard at the first dispatch.
      barrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      BufferOverrides over;
      for (const StepRecording::PoolUse& u : n.pools) {
        const size_t p = static_cast<size_t>(u.pool);
        check(p < pools_.size(), "vulkan: a recorded node binds pool {} of {}", u.pool, pools_.size());
        over[u.tensor] = {pools_[p].get(), pool_bytes_[p] - 2 * kGuardBytes};
      }
      // A shared input binds the buffer of the node that wrote it; the barrier above made that
      // node's shader writes visible to these reads.
      for (const StepRecording::Share& sh : n.shares) {
        check(sh.src_node >= 0 && static_cast<size_t>(sh.src_node) < i, "vulkan: node {} shares a tensor of node {}", i,
              sh.src_node);
        over[sh.tensor] = {launches[static_cast<size_t>(sh.src_node)]->buffer(sh.src), static_cast<VkDeviceSize>(sh.bytes)};
      }
      l.record_dispatches(cb_, descriptor_pool_, over);
      node_tensors_.push_back({&l, n.tensors});
    }
    // The output, written by the last node's dispatches, into the host-visible readback buffer; the
    // host reads it after the fence wait, so the transfer write is made available to the host.
    barrier(cb_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    const VkBufferCopy oc{0, 0, output_bytes_};
    vkCmdCopyBuffer(cb_, out_launch->buffer(r.output), readback_.get(), 1, &oc);
    barrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    if (queries_) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
    TS_VK(vkEndCommandBuffer(cb_));
    ctx_.check_messages("recording a step");
  }

  // One bind: bytes of a node's tensor (or of the state buffer) into this node's tensor. Data
  // offsets: the tensors' buffers hold their storage, the data after the leading guard.
  void record_copy(const StepRecording& r, const std::vector<RecordableLaunch*>& launches, RecordableLaunch& dst,
                   const StepRecording::Copy& c) {
    const VkDeviceSize dst_off = kGuardBytes + static_cast<VkDeviceSize>(c.dst_byte);
    if (c.src_node == StepRecording::kState) {
      const int64_t first = c.src_byte / 4, last = (c.src_byte + c.bytes + 3) / 4;
      check(c.src_byte % 4 == 0 && c.bytes % 4 == 0 && last <= static_cast<int64_t>(state_words_),
            "vulkan: a recorded copy reads state bytes [{}, {}) of {} words", c.src_byte, c.src_byte + c.bytes,
            state_words_);
      if (r.bake_state_word >= first && r.bake_state_word < last) {
        // The fault a test injects: the words as they are now, inline in the command buffer.
        vkCmdUpdateBuffer(cb_, dst.buffer(c.dst), dst_off, static_cast<VkDeviceSize>(c.bytes),
                          r.state.data() + first);
        return;
      }
      const VkBufferCopy bc{static_cast<VkDeviceSize>(c.src_byte), dst_off, static_cast<VkDeviceSize>(c.bytes)};
      vkCmdCopyBuffer(cb_, state_.get(), dst.buffer(c.dst), 1, &bc);
      return;
    }
    RecordableLaunch& src = *launches.at(static_cast<size_t>(c.src_node));
    const VkBufferCopy bc{kGuardBytes + static_cast<VkDeviceSize>(c.src_byte), dst_off, static_cast<VkDeviceSize>(c.bytes)};
    vkCmdCopyBuffer(cb_, src.buffer(c.src), dst.buffer(c.dst), 1, &bc);
  }

  // Every pool's storage (guards included) between the host tensors and the device buffers, through
  // one host-visible buffer, in one queue submit.
  void move_pools(std::span<Tensor* const> pools, bool up) {
    check(pools.size() == pools_.size(), "vulkan: the recorded step has {} pools, given {}", pools_.size(), pools.size());
    VkDeviceSize total = 0;
    for (size_t i = 0; i < pools.size(); ++i) {
      check(pools[i]->storage_bytes() == pool_bytes_[i], "vulkan: pool {} is {} bytes, {} at recording", i,
            pools[i]->storage_bytes(), pool_bytes_[i]);
      total += pool_bytes_[i];
    }
    if (total == 0) return;
    Buffer staging(ctx_, total, true);
    if (up) {
      VkDeviceSize off = 0;
      for (size_t i = 0; i < pools.size(); ++i) {
        std::memcpy(static_cast<char*>(staging.mapped()) + off, pools[i]->storage(), pool_bytes_[i]);
        off += pool_bytes_[i];
      }
    }
    ctx_.submit_and_wait([&](VkCommandBuffer cb) {
      // The last replay's shader reads and writes of the pools before this copy writes or reads them.
      barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
              VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
      VkDeviceSize off = 0;
      for (size_t i = 0; i < pools.size(); ++i) {
        const VkBufferCopy c{up ? off : 0, up ? 0 : off, pool_bytes_[i]};
        vkCmdCopyBuffer(cb, up ? staging.get() : pools_[i].get(), up ? pools_[i].get() : staging.get(), 1, &c);
        off += pool_bytes_[i];
      }
      // A download's transfer writes made available to the host, which reads after the fence.
      barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
              VK_ACCESS_HOST_READ_BIT);
    });
    if (!up) {
      VkDeviceSize off = 0;
      for (size_t i = 0; i < pools.size(); ++i) {
        std::memcpy(pools[i]->storage(), static_cast<const char*>(staging.mapped()) + off, pool_bytes_[i]);
        off += pool_bytes_[i];
      }
    }
    ctx_.check_messages(up ? "uploading the KV pools" : "downloading the KV pools");
  }

  void release() {
    VkDevice d = ctx_.device();
    if (cb_) vkFreeCommandBuffers(d, ctx_.command_pool(), 1, &cb_);
    if (descriptor_pool_) vkDestroyDescriptorPool(d, descriptor_pool_, nullptr);
    if (queries_) vkDestroyQueryPool(d, queries_, nullptr);
    cb_ = VK_NULL_HANDLE;
    descriptor_pool_ = VK_NULL_HANDLE;
    queries_ = VK_NULL_HANDLE;
  }

  Context& ctx_;
  size_t state_words_ = 0;
  Buffer state_, readback_;
  std::vector<Buffer> pools_;
  std::vector<VkDeviceSize> pool_bytes_;
  VkDeviceSize output_bytes_ = 0;
  std::vector<std::pair<RecordableLaunch*, std::vector<std::string>>> node_tensors_;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  double seconds_ = 0;
};

}  // namespace

std::unique_ptr<RecordedStep> record_vulkan_step(Context& ctx, const StepRecording& r) {
  return std::make_unique<VulkanRecordedStep>(ctx, r);
}

}  // namespace ts::vk
