// A whole step of OpenCL launches as one cl_khr_command_buffer, recorded once and enqueued per step.
//
// The host writes a step's state words into a small device buffer (write_state); the command buffer
// copies them into the nodes' index tensors, so every per-step scalar a kernel uses is read from
// device memory (kernel arguments hold shapes only: the plans never read tensor values). A node's
// whole inputs are the buffers of the nodes that wrote them, bound as its kernel arguments (shares);
// its other inputs (parts of a tensor, in-out tensors) are copied from those buffers. Each K/V pool
// is one device buffer, bound as the kernel argument of every launch that uses it, and stays on the
// device between steps. A replay is one enqueue of the command buffer, one wait on its event and one
// read of the output.
//
// Every command waits on the sync point of the one before it: the step is a chain (a node reads what
// the previous ones wrote), whatever order the driver would otherwise run a command buffer's
// commands in. Successive replays and the state write are ordered by the in-order queue.
#include "opencl/recorded_step.h"

#include <CL/cl_ext.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>

namespace ts::ocl {
namespace {

// The entry points, looked up on the device's platform (an extension's functions are not exported
// by the ICD loader).
struct CommandBufferApi {
  clCreateCommandBufferKHR_fn create = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  clCommandCopyBufferKHR_fn copy = nullptr;
  clCommandFillBufferKHR_fn fill = nullptr;
  std::string missing;  // the first that did not resolve, or the reason there is none
};

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

// The extension's version as the device reports it (OpenCL 3.0's CL_DEVICE_EXTENSIONS_WITH_VERSION,
// queried by value: this build targets the 1.2 headers); 0 when it does not say.
uint32_t extension_version(cl_device_id d, const char* name) {
  constexpr cl_device_info kExtensionsWithVersion = 0x1060;
  struct NameVersion {
    cl_uint version;
    char name[64];
  };
  size_t n = 0;
  if (clGetDeviceInfo(d, kExtensionsWithVersion, 0, nullptr, &n) != CL_SUCCESS || n == 0) return 0;
  std::vector<NameVersion> v(n / sizeof(NameVersion));
  if (clGetDeviceInfo(d, kExtensionsWithVersion, v.size() * sizeof(NameVersion), v.data(), nullptr) != CL_SUCCESS)
    return 0;
  for (const NameVersion& e : v)
    if (std::strncmp(e.name, name, sizeof e.name) == 0) return e.version;
  return 0;
}

std::string version_str(uint32_t v) { return fmt::format("{}.{}.{}", v >> 22, (v >> 12) & 0x3ff, v & 0xfff); }

const CommandBufferApi& api(Runtime& rt) {
  static CommandBufferApi a = [&] {
    CommandBufferApi x;
    const std::string exts = device_string(rt.device(), CL_DEVICE_EXTENSIONS);
    if (exts.find("cl_khr_command_buffer") == std::string::npos) {
      x.missing = rt.device_name() + " does not offer cl_khr_command_buffer";
      return x;
    }
    // The provisional extension changed its entry points' arguments at 0.9.5 (a properties list on
    // every command); the header this build has declares the earlier ones.
    const uint32_t v = extension_version(rt.device(), "cl_khr_command_buffer");
    if (v != 0 && ((v >> 22) != 0 || ((v >> 12) & 0x3ff) != 9 || (v & 0xfff) >= 5)) {
      x.missing = fmt::format("{} offers cl_khr_command_buffer {}; this build drives the 0.9.0-0.9.4 entry points",
                              rt.device_name(), version_str(v));
      return x;
    }
    cl_platform_id platform = nullptr;
    if (clGetDeviceInfo(rt.device(), CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) != CL_SUCCESS) {
      x.missing = "the device's platform is unknown";
      return x;
    }
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(clGetExtensionFunctionAddressForPlatform(platform, name));
      if (!fn && x.missing.empty()) x.missing = fmt::format("{} offers cl_khr_command_buffer but not {}", rt.device_name(), name);
    };
    get(x.create, "clCreateCommandBufferKHR");
    get(x.finalize, "clFinalizeCommandBufferKHR");
    get(x.release, "clReleaseCommandBufferKHR");
    get(x.enqueue, "clEnqueueCommandBufferKHR");
    get(x.ndrange, "clCommandNDRangeKernelKHR");
    get(x.copy, "clCommandCopyBufferKHR");
    get(x.fill, "clCommandFillBufferKHR");
    if (!x.missing.empty()) return x;
    // The queue the command buffer is recorded for must have the properties the device requires.
    constexpr cl_device_info kRequiredQueueProperties = 0x12AA;  // CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR
    cl_command_queue_properties need = 0, have = 0;
    clGetDeviceInfo(rt.device(), kRequiredQueueProperties, sizeof need, &need, nullptr);
    clGetCommandQueueInfo(rt.queue(), CL_QUEUE_PROPERTIES, sizeof have, &have, nullptr);
    if ((need & have) != need)
      x.missing = fmt::format("{}'s command buffers need queue properties 0x{:x}, the backend's queue has 0x{:x}",
                              rt.device_name(), need, have);
    return x;
  }();
  return a;
}

class ClRecordedStep final : public RecordedStep {
 public:
  ClRecordedStep(Runtime& rt, const StepRecording& r) : rt_(rt), api_(api(rt)) {
    check(api_.missing.empty(), "opencl: no command buffers: {}", api_.missing);
    try {
      build(r);
    } catch (...) {
      if (cb_) api_.release(cb_);
      cb_ = nullptr;
      throw;
    }
  }
  ~ClRecordedStep() override {
    if (cb_) api_.release(cb_);
  }

  void write_state(std::span<const uint32_t> words) override {
    check(words.size() == state_host_.size(), "opencl: a recorded step reads {} state words, given {}",
          state_host_.size(), words.size());
    // A write still in flight reads state_host_: let it finish before the host changes it. A replay
    // between two writes has already waited (its blocking read), so a step pays no wait here.
    if (state_in_flight_) CL_CHECK(clFinish(rt_.queue()));
    std::copy(words.begin(), words.end(), state_host_.begin());
    // The in-order queue runs the write before the next replay's command buffer reads the words.
    CL_CHECK(clEnqueueWriteBuffer(rt_.queue(), state_.get(), CL_FALSE, 0, state_host_.size() * 4, state_host_.data(), 0,
                                  nullptr, nullptr));
    state_in_flight_ = true;
  }

  void replay(Tensor& out) override {
    check(out.storage_bytes() == output_bytes_, "opencl: the recorded step's output is {} bytes, its tensor {}",
          output_bytes_, out.storage_bytes());
    using Clock = std::chrono::steady_clock;
    cl_command_queue q = rt_.queue();
    cl_event e = nullptr;
    CL_CHECK(api_.enqueue(1, &q, cb_, 0, nullptr, &e));
    const Event done(e);
    const Clock::time_point enqueued = Clock::now();
    CL_CHECK(clWaitForEvents(1, &e));
    const double waited = std::chrono::duration<double>(Clock::now() - enqueued).count();
    CL_CHECK(clEnqueueReadBuffer(q, output_, CL_TRUE, 0, output_bytes_, out.storage(), 0, nullptr, nullptr));
    state_in_flight_ = false;
    // The device's share of the step: the command buffer's event profile where the driver times the
    // whole buffer (a GPU's), the host's wait for it where the event is a marker (PoCL 3.1 reports
    // about 50 ns for a step of milliseconds): the larger of the two.
    cl_ulong start = 0, end = 0;
    double profiled = 0;
    if (clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) == CL_SUCCESS &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) == CL_SUCCESS && end > start)
      profiled = static_cast<double>(end - start) * 1e-9;
    seconds_ = std::max(profiled, waited);
  }

  double last_seconds() const override { return seconds_; }

  void upload_pools(std::span<Tensor* const> pools) override {
    check_pools(pools);
    for (size_t i = 0; i < pools.size(); ++i)
      CL_CHECK(clEnqueueWriteBuffer(rt_.queue(), pools_[i].storage.get(), CL_TRUE, 0, pools[i]->storage_bytes(),
                                    pools[i]->storage(), 0, nullptr, nullptr));
  }
  void download_pools(std::span<Tensor* const> pools) override {
    check_pools(pools);
    for (size_t i = 0; i < pools.size(); ++i)
      CL_CHECK(clEnqueueReadBuffer(rt_.queue(), pools_[i].storage.get(), CL_TRUE, 0, pools[i]->storage_bytes(),
                                   pools[i]->storage(), 0, nullptr, nullptr));
  }

  void download_nodes() override {
    for (auto& [launch, names] : node_tensors_) launch->download(names);
  }

 private:
  void check_pools(std::span<Tensor* const> pools) const {
    check(pools.size() == pools_.size(), "opencl: the recorded step has {} pools, given {}", pools_.size(), pools.size());
    for (size_t i = 0; i < pools.size(); ++i)
      check(pools[i]->storage_bytes() == pool_bytes_[i], "opencl: pool {} is {} bytes, {} at recording", i,
            pools[i]->storage_bytes(), pool_bytes_[i]);
  }

  // A buffer of `bytes` with a data sub-buffer after the leading guard, as the launches' tensors.
  DeviceTensor device_tensor(size_t bytes) {
    cl_int rc = CL_SUCCESS;
    DeviceTensor d;
    d.storage = Mem(clCreateBuffer(rt_.context(), CL_MEM_READ_WRITE, bytes, nullptr, &rc));
    CL_CHECK(rc);
    cl_buffer_region region{kGuardBytes, bytes - kGuardBytes};
    d.data = Mem(clCreateSubBuffer(d.storage.get(), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc));
    CL_CHECK(rc);
    return d;
  }

  // The previous command's sync point as the wait list of the next, and the next's returned.
  template <class F> void chained(F&& command) {
    cl_sync_point_khr next = 0;
    CL_CHECK(command(have_last_ ? 1u : 0u, have_last_ ? &last_ : nullptr, &next));
    last_ = next, have_last_ = true;
  }

  void build(const StepRecording& r) {
    cl_int rc = CL_SUCCESS;
    state_host_ = r.state;
    state_ = Mem(clCreateBuffer(rt_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                std::max<size_t>(4, state_host_.size() * 4), state_host_.data(), &rc));
    CL_CHECK(rc);
    for (const Tensor* p : r.pools) {
      pool_bytes_.push_back(p->storage_bytes());
      pools_.push_back(device_tensor(p->storage_bytes()));
    }
    upload_pools(r.pools);

    std::vector<RecordableLaunch*> launches;
    for (const StepRecording::Node& n : r.nodes) {
      auto* l = dynamic_cast<RecordableLaunch*>(n.launch);
      check(l != nullptr, "opencl: a recorded step's launch was not prepared by the OpenCL backend");
      launches.push_back(l);
    }
    output_ = launches.at(static_cast<size_t>(r.output_node))->buffer(r.output).storage.get();
    output_bytes_ = r.output_bytes;

    cl_command_queue q = rt_.queue();
    cb_ = api_.create(1, &q, nullptr, &rc);
    CL_CHECK(rc);
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      const StepRecording::Node& n = r.nodes[i];
      RecordableLaunch& l = *launches[i];
      for (const StepRecording::Copy& c : n.copies) record_copy(r, launches, l, c);
      // The pools' shared sub-buffers in place of the launch's own. The extension says a kernel
      // command captures the arguments when it is recorded, but PoCL 3.1 reads them when the command
      // buffer runs (a replay with the launch's own pools given back after recording read stale
      // pools): so the arguments stay rebound, and the launch, whose kernels now point at the shared
      // pools, belongs to the recording from here on (the graph runs its eager steps on new ones).
      // A shared input is rebound the same way, to the data of the node that wrote it.
      std::vector<std::pair<cl_mem, cl_mem>> swap;  // the launch's own sub-buffer -> the one it reads
      for (const StepRecording::PoolUse& u : n.pools) {
        check(u.pool >= 0 && static_cast<size_t>(u.pool) < pools_.size(), "opencl: a recorded node binds pool {} of {}",
              u.pool, pools_.size());
        swap.push_back({l.buffer(u.tensor).data.get(), pools_[static_cast<size_t>(u.pool)].data.get()});
      }
      for (const StepRecording::Share& sh : n.shares) {
        check(sh.src_node >= 0 && static_cast<size_t>(sh.src_node) < i, "opencl: node {} shares a tensor of node {}", i,
              sh.src_node);
        swap.push_back({l.buffer(sh.tensor).data.get(), launches[static_cast<size_t>(sh.src_node)]->buffer(sh.src).data.get()});
      }
      for (const Dispatch& d : l.dispatches()) {
        for (const auto& [index, mem] : d.mem_args)
          for (const auto& [own, shared] : swap)
            if (mem == own) {
              cl_mem m = shared;
              CL_CHECK(clSetKernelArg(d.kernel.get(), index, sizeof m, &m));
            }
        chained([&](cl_uint nw, const cl_sync_point_khr* w, cl_sync_point_khr* sp) {
          return api_.ndrange(cb_, nullptr, nullptr, d.kernel.get(), d.dims, nullptr, d.global, d.local, nw, w, sp,
                              nullptr);
        });
      }
      node_tensors_.push_back({&l, n.tensors});
    }
    CL_CHECK(api_.finalize(cb_));
  }

  // One bind: bytes of a node's tensor (or of the state buffer) into this node's tensor. The
  // offsets are into the tensors' storage buffers, the data after the leading guard.
  void record_copy(const StepRecording& r, const std::vector<RecordableLaunch*>& launches, RecordableLaunch& dst,
                   const StepRecording::Copy& c) {
    cl_mem to = dst.buffer(c.dst).storage.get();
    const size_t dst_off = kGuardBytes + static_cast<size_t>(c.dst_byte), bytes = static_cast<size_t>(c.bytes);
    if (c.src_node == StepRecording::kState) {
      const int64_t first = c.src_byte / 4, last = (c.src_byte + c.bytes + 3) / 4;
      check(c.src_byte % 4 == 0 && c.bytes % 4 == 0 && last <= static_cast<int64_t>(state_host_.size()),
            "opencl: a recorded copy reads state bytes [{}, {}) of {} words", c.src_byte, c.src_byte + c.bytes,
            state_host_.size());
      if (r.bake_state_word >= first && r.bake_state_word < last) {
        // The fault a test injects: the words as they are now, each a fill pattern in the command
        // buffer (kept here: a driver may read the pattern when the command runs, as PoCL does kernel
        // arguments).
        for (int64_t wd = first; wd < last; ++wd)
          chained([&](cl_uint nw, const cl_sync_point_khr* w, cl_sync_point_khr* sp) {
            const uint32_t& pattern = baked_.emplace_back(r.state[static_cast<size_t>(wd)]);
            return api_.fill(cb_, nullptr, to, &pattern, 4,
                             dst_off + static_cast<size_t>(wd - first) * 4, 4, nw, w, sp, nullptr);
          });
        return;
      }
      chained([&](cl_uint nw, const cl_sync_point_khr* w, cl_sync_point_khr* sp) {
        return api_.copy(cb_, nullptr, state_.get(), to, static_cast<size_t>(c.src_byte), dst_off, bytes, nw, w, sp,
                         nullptr);
      });
      return;
    }
    cl_mem from = launches.at(static_cast<size_t>(c.src_node))->buffer(c.src).storage.get();
    chained([&](cl_uint nw, const cl_sync_point_khr* w, cl_sync_point_khr* sp) {
      return api_.copy(cb_, nullptr, from, to, kGuardBytes + static_cast<size_t>(c.src_byte), dst_off, bytes, nw, w, sp,
                       nullptr);
    });
  }

  Runtime& rt_;
  const CommandBufferApi& api_;
  cl_command_buffer_khr cb_ = nullptr;
  std::vector<uint32_t> state_host_;
  std::deque<uint32_t> baked_;  // the fill patterns of a baked state word (stable addresses)
  bool state_in_flight_ = false;
  Mem state_;
  std::vector<DeviceTensor> pools_;
  std::vector<size_t> pool_bytes_;
  cl_mem output_ = nullptr;  // the output node's storage buffer (its launch owns it)
  size_t output_bytes_ = 0;
  std::vector<std::pair<RecordableLaunch*, std::vector<std::string>>> node_tensors_;
  cl_sync_point_khr last_ = 0;
  bool have_last_ = false;
  double seconds_ = 0;
};

}  // namespace

Support command_buffer_support(Runtime& rt) {
  const CommandBufferApi& a = api(rt);
  return a.missing.empty() ? Support::yes() : Support::no(a.missing);
}

std::unique_ptr<RecordedStep> record_opencl_step(Runtime& rt, const StepRecording& r) {
  return std::make_unique<ClRecordedStep>(rt, r);
}

}  // namespace ts::ocl
