// The Vulkan backend: availability, support, and the Launch that binds an op's tensors to device
// buffers, records its dispatches once, and replays them under timestamp queries.
#include "vulkan/backend.h"

#include <algorithm>
#include <vector>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/collective.h"
#include "core/quant/int8_route.h"
#include "core/tensor_parallel.h"
#include "core/unsupported.h"
#include "vulkan/attention/attention_engine.h"
#include "vulkan/collective.h"
#include "vulkan/plan.h"
#include "vulkan/recorded_step.h"
#include "vulkan/runtime/pipelines.h"
#include "vulkan/runtime/roofs.h"
#include "vulkan/runtime/runtime.h"

namespace ts {
namespace {

using namespace vk;

// Grid-stride kernels on a CPU device: enough groups to feed every core, few enough that the
// per-group setup (measured on lavapipe: 5x on the m=1 GEMV) does not dominate.
constexpr uint32_t kCpuGroupCap = 256;
// Work groups that fill a device (Target::fill_groups). Vulkan reports no compute-unit count:
// 1024 keeps a GPU of 100+ compute units several groups deep (an H100, 132 SMs, attention decode
// with its key split: 256 -> 1024 took paged b8 ctx4096 F16 from 2.36 to 1.31 ms and flash decode
// F32 from 319 to 244 us; 4096 gained nothing more); a CPU driver runs one group per core, and 32
// covers common core counts without paying the per-group setup many times over.
constexpr uint32_t kGpuFillGroups = 1024, kCpuFillGroups = 32;
constexpr uint32_t kMaxWorkGroup = 256;  // the largest local size in vulkan/shaders/

class VulkanImpl;

class VulkanLaunch final : public Launch, public RecordableLaunch {
 public:
  // `what` names the work in messages (the op); `outputs` are the tensors finish() brings back,
  // `inputs` (inputs and in-outs) those upload_inputs() writes again.
  VulkanLaunch(VulkanImpl& b, std::string what, std::vector<std::string> outputs, std::vector<std::string> inputs,
               TensorMap& io, std::vector<Dispatch> plan);
  ~VulkanLaunch() override;
  void execute() override;
  double last_seconds() const override { return seconds_; }
  void finish() override;
  void upload_inputs() override;

  VkBuffer buffer(const std::string& name) const override { return bufs_.at(name).get(); }
  std::pair<uint32_t, uint32_t> descriptor_counts() const override;
  void record_dispatches(VkCommandBuffer cb, VkDescriptorPool pool, const BufferOverrides& overrides) override;
  void download(const std::vector<std::string>& names) override;

 private:
  void setup();
  void upload(const std::vector<std::string>& names);
  void alloc_scratch();
  VkDescriptorBufferInfo buffer_info(const Dispatch& x, const Binding& bd, const BufferOverrides& overrides) const;
  void record();
  void release();

  VulkanImpl& b_;
  Context& ctx_;
  std::string op_;
  TensorMap& io_;
  std::vector<std::string> outputs_, inputs_;  // inputs_: inputs and in-outs
  std::vector<Dispatch> plan_;
  std::map<std::string, Buffer> bufs_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
  double seconds_ = 0;
};

class VulkanImpl final : public Backend {
 public:
  ~VulkanImpl() override { std::erase(live(), this); }
  VulkanImpl() {
    add_gemm_planners(planners_);
    add_norm_planners(planners_);
    add_elementwise_planners(planners_);
    add_layout_planners(planners_);
    add_rope_planners(planners_);
    add_paged_split_planners(planners_);
    add_attention_planners(planners_);
    add_paged_planners(planners_);
    add_kv_planners(planners_);
    add_argmax_planners(planners_);
    add_quant_planners(planners_);
    add_moe_route_planners(planners_);
    add_moe_combine_planners(planners_);
    add_moe_expert_planners(planners_);
  }
  std::string name() const override { return VulkanBackend::kName; }

  Availability availability() override {
    init();
    if (!ctx_) return {false, reason_};
    const DeviceInfo& d = ctx_->info();
    const GemvShape g = gemv_shape(target(DType::F32), 448);  // a Q4_K row of k = 14336
    const std::string shape = g.mode == 1 ? fmt::format("{} invocations, {} rows a subgroup, {} chunks a lane's batch",
                                                        g.wg, g.rows, g.unroll)
                                          : fmt::format("{} invocations x {} rows a group", g.wg, g.rows);
    const int64_t tile = decode_tile_keys(target(DType::F32), 128, 4);  // Llama-3-8B's heads
    const std::string attn = tile > 0 ? fmt::format("decode kernel, tiles of {} keys at head_dim 128", tile)
                                      : std::string("general kernel");
    return {true, fmt::format("{} (subgroup size {}, {} reductions{}{}{}{}; decode GEMV {}, {} activations; attention {})",
                              d.name, d.subgroup_size, use_subgroups() ? "subgroup" : "shared-memory",
                              d.storage16 ? ", 16-bit storage" : "", d.float16 ? ", F16 arithmetic" : "",
                              d.int_dot ? (d.int_dot_fast ? ", int8 dot products (accelerated)" : ", int8 dot products")
                                        : "",
                              ctx_->validation() ? ", validation on" : "", shape,
                              gemv_int8(target(DType::F32), 1, kMinInt8Outputs) ? "int8" : "F32", attn)};
  }

  Support supports(const Problem& pr) override {
    if (is_tensor_parallel(*pr.op)) return tensor_parallel_support(*this, pr);  // its gemms and all_reduce
    if (is_collective(*pr.op)) return collective_support(pr);  // vulkan/collective.cpp
    auto it = planners_.find(pr.op->name());
    if (it == planners_.end()) return Support::no("no Vulkan kernel for this op yet");
    // Activations in F32, F16 or BF16 (a variant per storage type), F32 scales, integer ids, GGUF
    // bytes (read as words by the quant shaders), I8 / F8_E4M3 KV pools (words, attn_kv).
    const Support s = dtypes_handled(
        pr, {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U32, DType::U8, DType::I8, DType::F8_E4M3},
        "Vulkan");
    if (!s.ok) return s;
    init();
    for (const auto& d : pr.decls)
      if (ctx_ && (d.dtype == DType::F16 || d.dtype == DType::BF16) && !ctx_->info().storage16)
        return Support::no(fmt::format("tensor '{}' is {}, which needs storageBuffer16BitAccess; {} lacks it", d.name,
                                       dtype_name(d.dtype), ctx_->info().name));
    return it->second.supports ? it->second.supports(pr) : Support::yes();
  }

  std::optional<Tolerance> tolerance(const Problem& pr, const std::string&, const TensorMap& inputs) override {
    auto it = planners_.find(pr.op->name());
    if (it == planners_.end() || !it->second.tolerance) return std::nullopt;
    init();
    if (!ctx_) return std::nullopt;
    return it->second.tolerance(pr, target(pr.dtype), inputs);
  }

  std::unique_ptr<Launch> prepare(const Problem& pr, TensorMap& io) override {
    init();
    check(ctx_ != nullptr, "Vulkan backend unavailable: {}", reason_);
    if (is_tensor_parallel(*pr.op)) return prepare_tensor_parallel(*this, pr, io);
    if (is_collective(*pr.op)) return prepare_collective(*ctx_, pr, io);
    auto it = planners_.find(pr.op->name());
    check(it != planners_.end(), "vulkan: no kernel for {}", pr.op->name());
    const Target t = target(pr.dtype);
    std::vector<std::string> inputs;
    for (const auto& d : pr.decls)
      if (d.role != Role::Out) inputs.push_back(d.name);
    return std::make_unique<VulkanLaunch>(*this, pr.op->name(), pr.output_names(), std::move(inputs), io,
                                          it->second.plan(pr.params, Decls(pr), t));
  }

  // What a planner may depend on: the storage dtype and the device's limits and features.
  Target target(DType dtype) {
    Target t;
    t.dtype = dtype;
    t.subgroups = use_subgroups();
    for (int i = 0; i < 3; ++i) t.max_groups[i] = ctx_->info().props.limits.maxComputeWorkGroupCount[i];
    t.max_range = ctx_->info().props.limits.maxStorageBufferRange;
    t.max_shared = ctx_->info().props.limits.maxComputeSharedMemorySize;
    // TOUCHSTONE_VULKAN_MAX_RANGE=bytes splits smaller tensors as if the limit were lower (tests the split paths).
    if (const char* v = std::getenv("TOUCHSTONE_VULKAN_MAX_RANGE"); v && std::atoll(v) > 0)
      t.max_range = std::min<uint64_t>(t.max_range, static_cast<uint64_t>(std::atoll(v)));
    t.offset_align = std::max<uint64_t>(4, ctx_->info().props.limits.minStorageBufferOffsetAlignment);
    const bool cpu = ctx_->info().props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    t.cpu = cpu;
    t.subgroup_size = std::max<uint32_t>(1, ctx_->info().subgroup_size);
    t.group_cap = cpu ? kCpuGroupCap : t.max_groups[0];
    t.fill_groups = cpu ? kCpuFillGroups : kGpuFillGroups;
    t.int_dot = ctx_->info().int_dot;
    return t;
  }

  bool has_device_roofs() const override { return true; }

  Support step_recording_support() override {
    init();
    if (!ctx_) return Support::no("Vulkan backend unavailable: " + reason_);
    return Support::yes();
  }

  std::unique_ptr<RecordedStep> record_step(const StepRecording& r) override {
    init();
    check(ctx_ != nullptr, "Vulkan backend unavailable: {}", reason_);
    return record_vulkan_step(*ctx_, r);
  }

  Support roof_support(Roof r) override {
    init();
    if (!ctx_) return Support::no("Vulkan backend unavailable: " + reason_);
    if (r == Roof::fma_f16 && !ctx_->info().float16)
      return Support::no(ctx_->info().name + " has no F16 arithmetic (shaderFloat16 of VK_KHR_shader_float16_int8)");
    return Support::yes();
  }

  std::unique_ptr<RoofRun> prepare_roof(Roof r) override {
    const Support s = roof_support(r);
    check(s.ok, "vulkan: {}: {}", roof_name(r), s.reason);
    const bool cpu = ctx_->info().props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    RoofPlan plan = plan_roof(r, target(DType::F32), cpu);
    auto run = std::make_unique<RoofRun>();
    run->c = std::move(plan.c);
    run->detail = plan.detail + " on " + ctx_->info().name;
    std::vector<std::string> inputs;
    for (const auto& [name, tensor] : run->c.io)
      if (std::find(run->c.outputs.begin(), run->c.outputs.end(), name) == run->c.outputs.end()) inputs.push_back(name);
    run->launch = std::make_unique<VulkanLaunch>(*this, roof_name(r), run->c.outputs, std::move(inputs), run->c.io,
                                                 std::move(plan.dispatches));
    return run;
  }

  // Subgroup variants where the device has the arithmetic ops, unless TOUCHSTONE_VULKAN_SUBGROUPS=0
  // asks for the shared-memory fallbacks (to test them on a device that has subgroups).
  bool use_subgroups() const {
    const char* v = std::getenv("TOUCHSTONE_VULKAN_SUBGROUPS");
    return ctx_->info().subgroup_arithmetic && !(v && std::strcmp(v, "0") == 0);
  }

  // The read roof's stream (1 GiB, several times any GPU's last-level cache) through the device's
  // caches: an eviction by reads leaves clean lines, as the weights of the kernels before it do in a
  // real decode step. An eviction by writes (a fill) left the L2 full of dirty lines, which the timed
  // kernel then had to write back while it read. CPU drivers (lavapipe) use the host's.
  bool evict_device_caches() override {
    init();
    if (!ctx_ || ctx_->info().props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return false;
    if (!evict_) evict_ = prepare_roof(Roof::read);
    evict_->launch->execute();
    return true;
  }

  Context& ctx() { return *ctx_; }
  Pipelines& pipelines() { return *pipelines_; }
  // A host-visible staging buffer of at least `bytes`, reused across launches.
  Buffer& staging(VkDeviceSize bytes) {
    if (staging_.size() < bytes) {
      staging_ = Buffer();
      staging_ = Buffer(*ctx_, bytes, true);
    }
    return staging_;
  }

 private:
  void init() {
    if (tried_) return;
    tried_ = true;
    try {
      ctx_ = std::make_unique<Context>();
      // Every kernel runs work groups of up to kMaxWorkGroup invocations in x (1024 on most GPUs).
      const VkPhysicalDeviceLimits& lim = ctx_->info().props.limits;
      check(lim.maxComputeWorkGroupInvocations >= kMaxWorkGroup && lim.maxComputeWorkGroupSize[0] >= kMaxWorkGroup,
            "{} allows {} invocations per work group; the Vulkan kernels need {}", ctx_->info().name,
            lim.maxComputeWorkGroupInvocations, kMaxWorkGroup);
      pipelines_ = std::make_unique<Pipelines>(*ctx_);
      release_before_the_driver_exits();
    } catch (const Error& e) {
      reason_ = e.what();
      pipelines_.reset();
      ctx_.reset();
    }
  }

  // NVIDIA's driver tears itself down in an exit handler of its own, registered while vkCreateInstance
  // loads it; the registry's static destructor ran after it and crashed in vkDestroyDevice (an H100,
  // driver 580). Exit handlers run in reverse order of registration, so one registered now runs
  // before the driver's and frees every Vulkan object while the driver is whole. Launches never
  // outlive main (the benchmark releases its setups before returning). Every instance that opened a
  // device is released there, and one destroyed before (a test's own backend) leaves the list first:
  // the handler never reaches a freed instance.
  void release_before_the_driver_exits() {
    static const bool registered = [] {
      std::atexit([] {
        for (VulkanImpl* self : live()) {
          self->evict_.reset();
          self->staging_ = Buffer();
          self->pipelines_.reset();
          self->ctx_.reset();
          self->reason_ = "the Vulkan device was released at exit";
        }
      });
      return true;
    }();
    (void)registered;
    live().push_back(this);
  }
  // Never destroyed: static destructors (the registry's instance) may still look into it.
  static std::vector<VulkanImpl*>& live() {
    static auto* v = new std::vector<VulkanImpl*>();
    return *v;
  }

  PlannerTable planners_;
  bool tried_ = false;
  std::string reason_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Pipelines> pipelines_;
  Buffer staging_;  // declared after ctx_: destroyed before it
  std::unique_ptr<RoofRun> evict_;  // evict_device_caches' read stream, prepared on first use
};

VulkanLaunch::VulkanLaunch(VulkanImpl& b, std::string what, std::vector<std::string> outputs,
                           std::vector<std::string> inputs, TensorMap& io, std::vector<Dispatch> plan)
    : b_(b),
      ctx_(b.ctx()),
      op_(std::move(what)),
      io_(io),
      outputs_(std::move(outputs)),
      inputs_(std::move(inputs)),
      plan_(std::move(plan)) {
  try {
    setup();
  } catch (...) {
    release();  // the destructor does not run for a half-built launch
    throw;
  }
}

void VulkanLaunch::setup() {
  ctx_.take_messages();  // messages of an earlier failure are not this op's
  for (auto& [name, t] : io_) bufs_.emplace(name, Buffer(ctx_, t.storage_bytes(), false));
  std::vector<std::string> all;
  for (const auto& [name, t] : io_) all.push_back(name);
  upload(all);
  alloc_scratch();
  record();
  ctx_.check_messages("preparing " + op_);
}

// Tensors `names` whole (guards included) into their device buffers, through one staging buffer.
void VulkanLaunch::upload(const std::vector<std::string>& names) {
  VkDeviceSize total = 0;
  for (const auto& name : names) total += io_.at(name).storage_bytes();
  Buffer& st = b_.staging(total);
  VkDeviceSize off = 0;
  std::vector<std::pair<VkBuffer, VkBufferCopy>> copies;
  for (const auto& name : names) {
    const Tensor& t = io_.at(name);
    std::memcpy(static_cast<char*>(st.mapped()) + off, t.storage(), t.storage_bytes());
    copies.push_back({bufs_.at(name).get(), VkBufferCopy{off, 0, t.storage_bytes()}});
    off += t.storage_bytes();
  }
  ctx_.submit_and_wait([&](VkCommandBuffer cb) {
    // Earlier runs' shader reads and writes of these buffers finish before the copy overwrites them.
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    for (auto& [dst, c] : copies) vkCmdCopyBuffer(cb, st.get(), dst, 1, &c);
  });
}

void VulkanLaunch::upload_inputs() {
  upload(inputs_);
  ctx_.check_messages("uploading the inputs of " + op_);
}

// One device buffer per scratch name, as large as its largest binding; never uploaded: every
// kernel writes what it later reads.
void VulkanLaunch::alloc_scratch() {
  std::map<std::string, uint64_t> bytes;
  for (const Dispatch& x : plan_)
    for (const Binding& bd : x.bindings)
      if (bd.scratch) bytes[bd.tensor] = std::max(bytes[bd.tensor], bd.scratch);
  for (const auto& [name, n] : bytes) {
    check(!io_.count(name), "vulkan: scratch buffer '{}' has the name of a tensor of {}", name, op_);
    bufs_.emplace(name, Buffer(ctx_, n, false));
  }
}

// What binding `bd` of dispatch `x` sees: a scratch buffer from its start, or a tensor's data
// (after its leading guard) or a window of it.
VkDescriptorBufferInfo VulkanLaunch::buffer_info(const Dispatch& x, const Binding& bd,
                                                 const BufferOverrides& overrides) const {
  const VkPhysicalDeviceLimits& lim = ctx_.info().props.limits;
  if (bd.scratch) {
    supported_only_if(bd.scratch <= lim.maxStorageBufferRange,
          "vulkan: {} binds a scratch buffer of {} bytes, above this device's maxStorageBufferRange ({})", x.shader,
          bd.scratch, lim.maxStorageBufferRange);
    return {bufs_.at(bd.tensor).get(), 0, bd.scratch};
  }
  auto it = io_.find(bd.tensor);
  check(it != io_.end(), "vulkan: {} binds tensor '{}', which the case lacks", x.shader, bd.tensor);
  const auto over = overrides.find(bd.tensor);
  // The data sits after the leading guard; an empty tensor still binds a non-empty range.
  const VkDeviceSize nbytes = over != overrides.end() ? over->second.nbytes : it->second.nbytes();
  const VkDeviceSize range = bd.range ? bd.range : std::max<VkDeviceSize>(4, nbytes - std::min(nbytes, bd.offset));
  supported_only_if(range <= lim.maxStorageBufferRange,
        "vulkan: {} binds {} bytes of tensor '{}', above this device's maxStorageBufferRange ({}); this op "
        "has no split for it", x.shader, range, bd.tensor, lim.maxStorageBufferRange);
  check((kGuardBytes + bd.offset) % std::max<VkDeviceSize>(1, lim.minStorageBufferOffsetAlignment) == 0,
        "vulkan: window of '{}' at byte {} breaks the offset alignment", bd.tensor, bd.offset);
  return {over != overrides.end() ? over->second.buffer : bufs_.at(bd.tensor).get(), kGuardBytes + bd.offset, range};
}

VulkanLaunch::~VulkanLaunch() { release(); }

void VulkanLaunch::release() {
  VkDevice d = ctx_.device();
  if (cb_) vkFreeCommandBuffers(d, ctx_.command_pool(), 1, &cb_);
  if (pool_) vkDestroyDescriptorPool(d, pool_, nullptr);
  if (queries_) vkDestroyQueryPool(d, queries_, nullptr);
  cb_ = VK_NULL_HANDLE;
  pool_ = VK_NULL_HANDLE;
  queries_ = VK_NULL_HANDLE;
}

std::pair<uint32_t, uint32_t> VulkanLaunch::descriptor_counts() const {
  uint32_t descriptors = 0;
  for (const auto& x : plan_) descriptors += static_cast<uint32_t>(x.bindings.size());
  return {static_cast<uint32_t>(plan_.size()), descriptors};
}

void VulkanLaunch::record() {
  const auto [sets, descriptors] = descriptor_counts();
  pool_ = create_descriptor_pool(ctx_, sets, descriptors);
  queries_ = create_timestamp_pool(ctx_);

  cb_ = ctx_.begin_reusable();
  // Uploads (transfer) and earlier runs (compute) must land before the first dispatch reads.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  if (queries_) {
    vkCmdResetQueryPool(cb_, queries_, 0, 2);
    vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
  }
  record_dispatches(cb_, pool_, {});
  if (queries_) vkCmdWriteTimestamp(cb_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  TS_VK(vkEndCommandBuffer(cb_));
}

void VulkanLaunch::record_dispatches(VkCommandBuffer cb, VkDescriptorPool pool, const BufferOverrides& overrides) {
  VkDevice d = ctx_.device();
  for (size_t i = 0; i < plan_.size(); ++i) {
    const Dispatch& x = plan_[i];
    const Pipeline& pl = b_.pipelines().get(x.shader, static_cast<uint32_t>(x.bindings.size()), x.spec);
    VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = pool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &pl.set_layout;
    VkDescriptorSet set;
    TS_VK(vkAllocateDescriptorSets(d, &dai, &set));
    std::vector<VkDescriptorBufferInfo> infos(x.bindings.size());
    std::vector<VkWriteDescriptorSet> writes(x.bindings.size());
    for (size_t j = 0; j < x.bindings.size(); ++j) {
      infos[j] = buffer_info(x, x.bindings[j], overrides);
      writes[j] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[j].dstSet = set;
      writes[j].dstBinding = static_cast<uint32_t>(j);
      writes[j].descriptorCount = 1;
      writes[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[j].pBufferInfo = &infos[j];
    }
    vkUpdateDescriptorSets(d, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    check(x.push.size() * 4 <= kPushBytes, "vulkan: {} pushes {} bytes, above {}", x.shader, x.push.size() * 4,
          kPushBytes);
    std::array<uint32_t, kPushBytes / 4> push{};
    std::copy(x.push.begin(), x.push.end(), push.begin());
    for (int k = 0; k < 3; ++k)
      check(x.groups[k] >= 1 && x.groups[k] <= ctx_.info().props.limits.maxComputeWorkGroupCount[k],
            "vulkan: {} dispatch of {} groups in dimension {} is outside the device's limit", x.shader, x.groups[k], k);
    if (i > 0) {  // each dispatch sees the writes of the previous ones
      VkMemoryBarrier between{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      between.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      between.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                           &between, 0, nullptr, 0, nullptr);
    }
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pl.layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cb, pl.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes, push.data());
    vkCmdDispatch(cb, x.groups[0], x.groups[1], x.groups[2]);
  }
}

void VulkanLaunch::execute() {
  seconds_ = submit_timed(ctx_, cb_, queries_, "running " + op_);
}

void VulkanLaunch::finish() { download(outputs_); }

void VulkanLaunch::download(const std::vector<std::string>& names) {
  VkDeviceSize total = 0;
  for (const auto& n : names) total += io_.at(n).storage_bytes();
  Buffer& st = b_.staging(total);
  ctx_.submit_and_wait([&](VkCommandBuffer cb) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
    VkDeviceSize off = 0;
    for (const auto& n : names) {
      VkBufferCopy c{0, off, io_.at(n).storage_bytes()};
      vkCmdCopyBuffer(cb, bufs_.at(n).get(), st.get(), 1, &c);
      off += c.size;
    }
  });
  VkDeviceSize off = 0;
  for (const auto& n : names) {
    Tensor& t = io_.at(n);
    std::memcpy(t.storage(), static_cast<const char*>(st.mapped()) + off, t.storage_bytes());
    off += t.storage_bytes();
  }
  ctx_.check_messages("downloading the outputs of " + op_);
}

}  // namespace

std::unique_ptr<Backend> VulkanBackend::create() { return std::make_unique<VulkanImpl>(); }

}  // namespace ts
