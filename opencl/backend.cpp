// The OpenCL backend: device setup on first use, per-op planners, and the Launch that replays them.
#include "opencl/backend.h"

#include <algorithm>
#include <optional>

#include "core/collective.h"
#include "core/tensor_parallel.h"
#include "opencl/collective.h"
#include "opencl/plan.h"
#include "opencl/recorded_step.h"
#include "opencl/runtime/roofs.h"

namespace ts {
namespace ocl {
namespace {

class ClLaunch final : public Launch, public RecordableLaunch {
 public:
  ClLaunch(Runtime& rt, TensorMap& io, const Problem& pr) : rt_(rt), io_(io), outputs_(pr.output_names()) {
    for (const auto& d : pr.decls)
      if (d.role != Role::Out) inputs_.push_back(d.name);
  }
  // Work that is no op (a device roof): `outputs` come back in finish(), every other tensor is an input.
  ClLaunch(Runtime& rt, TensorMap& io, std::vector<std::string> outputs)
      : rt_(rt), io_(io), outputs_(std::move(outputs)) {
    for (const auto& [name, t] : io_)
      if (std::find(outputs_.begin(), outputs_.end(), name) == outputs_.end()) inputs_.push_back(name);
  }

  std::map<std::string, DeviceTensor>& buffers() { return bufs_; }
  void set_dispatches(std::vector<Dispatch> d) { dispatches_ = std::move(d); }

  // One device buffer per tensor, the whole storage uploaded; the kernels see the data sub-buffer.
  void allocate() {
    for (auto& [name, t] : io_) {
      cl_int rc = CL_SUCCESS;
      DeviceTensor d;
      d.storage = Mem(clCreateBuffer(rt_.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, t.storage_bytes(),
                                     t.storage(), &rc));
      CL_CHECK(rc);
      // The sub-buffer runs to the end of the storage, so a write past the data lands in the guard.
      cl_buffer_region region{kGuardBytes, t.storage_bytes() - kGuardBytes};
      d.data = Mem(clCreateSubBuffer(d.storage.get(), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc));
      CL_CHECK(rc);
      bufs_.emplace(name, std::move(d));
    }
  }

  void execute() override {
    std::vector<Event> events(dispatches_.size());
    for (size_t i = 0; i < dispatches_.size(); ++i) {
      const Dispatch& d = dispatches_[i];
      cl_event e = nullptr;
      CL_CHECK(clEnqueueNDRangeKernel(rt_.queue(), d.kernel.get(), d.dims, nullptr, d.global, d.local, 0, nullptr, &e));
      events[i] = Event(e);
    }
    CL_CHECK(clFinish(rt_.queue()));
    double ns = 0;
    for (const Event& e : events) {
      cl_ulong start = 0, end = 0;
      CL_CHECK(clGetEventProfilingInfo(e.get(), CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr));
      CL_CHECK(clGetEventProfilingInfo(e.get(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr));
      ns += static_cast<double>(end - start);
    }
    seconds_ = ns * 1e-9;
  }

  double last_seconds() const override { return seconds_; }

  // The same buffers, the whole storage again (a guard the host holds intact stays intact).
  void upload_inputs() override {
    for (const std::string& name : inputs_) {
      const Tensor& t = io_.at(name);
      CL_CHECK(clEnqueueWriteBuffer(rt_.queue(), bufs_.at(name).storage.get(), CL_FALSE, 0, t.storage_bytes(),
                                    t.storage(), 0, nullptr, nullptr));
    }
    CL_CHECK(clFinish(rt_.queue()));
  }

  const DeviceTensor& buffer(const std::string& name) const override {
    auto it = bufs_.find(name);
    check(it != bufs_.end(), "opencl: the launch has no tensor '{}'", name);
    return it->second;
  }
  const std::vector<Dispatch>& dispatches() const override { return dispatches_; }

  void finish() override { download(outputs_); }

  void download(const std::vector<std::string>& names) override {
    for (const std::string& name : names) {
      Tensor& t = io_.at(name);
      CL_CHECK(clEnqueueReadBuffer(rt_.queue(), bufs_.at(name).storage.get(), CL_TRUE, 0, t.storage_bytes(),
                                   t.storage(), 0, nullptr, nullptr));
    }
  }

 private:
  Runtime& rt_;
  TensorMap& io_;
  std::vector<std::string> outputs_, inputs_;  // inputs_: inputs and in-outs
  std::map<std::string, DeviceTensor> bufs_;
  std::vector<Dispatch> dispatches_;
  double seconds_ = 0;
};

class OpenclBackendImpl final : public Backend {
 public:
  OpenclBackendImpl() {
    add_linear_ops(plans_);
    add_norm_ops(plans_);
    add_elementwise_ops(plans_);
    add_layout_ops(plans_);
    add_rope_ops(plans_);
    add_attention_ops(plans_);
    add_argmax_ops(plans_);
    add_quant_ops(plans_);
    add_paged_attention_ops(plans_);
    add_paged_split_ops(plans_);
    add_kv_append_ops(plans_);
    add_moe_route_ops(plans_);
    add_moe_expert_ops(plans_);
    add_moe_combine_ops(plans_);
  }

  std::string name() const override { return OpenclBackend::kName; }

  Availability availability() override {
    open();
    return rt_ ? Availability{true, rt_->device_name()} : Availability{false, why_};
  }

  Support supports(const Problem& pr) override {
    if (is_tensor_parallel(*pr.op)) return tensor_parallel_support(*this, pr);  // its gemms and all_reduce
    if (is_collective(*pr.op)) return collective_support(pr);  // opencl/collective.cpp
    auto it = plans_.find(pr.op->name());
    if (it == plans_.end()) return Support::no("no OpenCL kernel for " + pr.op->name() + " yet");
    // Activations in F32, F16 or BF16 (a build option per program), F32 scales, integer ids, GGUF bytes,
    // I8 and F8_E4M3 KV pools.
    const Support s = dtypes_handled(
        pr, {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U32, DType::U8, DType::I8, DType::F8_E4M3},
        "OpenCL");
    if (!s.ok || !it->second.supports) return s;
    return it->second.supports(pr);
  }

  std::unique_ptr<Launch> prepare(const Problem& pr, TensorMap& io) override {
    open();
    check(rt_ != nullptr, "OpenCL backend unavailable: {}", why_);
    if (is_tensor_parallel(*pr.op)) return prepare_tensor_parallel(*this, pr, io);
    if (is_collective(*pr.op)) return prepare_collective(*rt_, pr, io);
    auto it = plans_.find(pr.op->name());
    check(it != plans_.end(), "OpenCL backend: no kernel for op '{}'", pr.op->name());
    auto launch = std::make_unique<ClLaunch>(*rt_, io, pr);
    launch->allocate();
    Planner planner(*rt_, pr, launch->buffers());
    it->second.plan(planner);
    launch->set_dispatches(planner.take());
    return launch;
  }

  Support step_recording_support() override {
    open();
    if (!rt_) return Support::no("OpenCL backend unavailable: " + why_);
    return command_buffer_support(*rt_);
  }

  std::unique_ptr<RecordedStep> record_step(const StepRecording& r) override {
    open();
    check(rt_ != nullptr, "OpenCL backend unavailable: {}", why_);
    return record_opencl_step(*rt_, r);
  }

  // The read roof's stream through the device's caches (see the Vulkan backend: an eviction by reads
  // leaves clean lines, where a fill left dirty ones for the timed kernel to write back). CPU drivers
  // (PoCL) use the host's.
  bool evict_device_caches() override {
    open();
    if (!rt_ || rt_->limits().cpu) return false;
    if (!evict_) evict_ = prepare_roof(Roof::read);
    evict_->launch->execute();
    return true;
  }

  bool has_device_roofs() const override { return true; }

  Support roof_support(Roof r) override {
    open();
    if (!rt_) return Support::no("OpenCL backend unavailable: " + why_);
    if (r == Roof::fma_f16 && !has_fp16(rt_->device()))
      return Support::no(rt_->device_name() + " has no F16 arithmetic (cl_khr_fp16)");
    return Support::yes();
  }

  std::unique_ptr<RoofRun> prepare_roof(Roof r) override {
    const Support s = roof_support(r);
    check(s.ok, "opencl: {}: {}", roof_name(r), s.reason);
    const RoofShape shape = roof_shape(r, rt_->limits());
    auto run = std::make_unique<RoofRun>();
    run->c = make_roof_case(r, shape);
    run->detail = shape.detail + " on " + rt_->device_name();
    auto launch = std::make_unique<ClLaunch>(*rt_, run->c.io, run->c.outputs);
    launch->allocate();
    static const Problem kNoOp{};  // a roof's kernels: F32, no parameters, no declared tensors
    Planner planner(*rt_, kNoOp, launch->buffers());
    plan_roof(r, shape, run->c, planner);
    launch->set_dispatches(planner.take());
    run->launch = std::move(launch);
    return run;
  }

 private:
  // Opens the device once; a missing driver is remembered as the reason, never thrown past here.
  void open() {
    if (tried_) return;
    tried_ = true;
    try {
      rt_ = std::make_unique<Runtime>();
    } catch (const Error& e) {
      why_ = e.what();
    }
  }

  PlanTable plans_;
  bool tried_ = false;
  std::unique_ptr<Runtime> rt_;
  std::string why_;
  std::unique_ptr<RoofRun> evict_;  // evict_device_caches' read stream, prepared on first use; released before rt_
};

}  // namespace
}  // namespace ocl

std::unique_ptr<Backend> OpenclBackend::create() { return std::make_unique<ocl::OpenclBackendImpl>(); }

}  // namespace ts
