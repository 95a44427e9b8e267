// baseline/clblast_sgemm/<gemm preset>: CLBlast SGEMM on the first OpenCL device, timed with
// OpenCL profiling events: the OpenCL gemm figure to beat on the same device.
#include <clblast.h>

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/baselines.h"
#include "bench/setup_cache.h"
#include "bench/sgemm_common.h"
#include "core/error.h"

namespace ts::bench {

namespace {

void cl_check(cl_int err, const char* what) { check(err == CL_SUCCESS, "{} failed: OpenCL error {}", what, err); }

// Owns one OpenCL handle and releases it with the matching clRelease*.
template <class H, cl_int (*Release)(H)> class Handle {
 public:
  Handle() = default;
  explicit Handle(H h) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  ~Handle() {
    if (h_) Release(h_);
  }
  H get() const { return h_; }
  H* out() { return &h_; }  // for calls that return the handle through a pointer (only while empty)

 private:
  H h_ = nullptr;
};
using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Buffer = Handle<cl_mem, clReleaseMemObject>;
using Event = Handle<cl_event, clReleaseEvent>;

// The first device of the first platform that has one; no id and the reason when there is none.
struct Device {
  cl_device_id id = nullptr;
  std::string name_or_reason;
};
Device first_device() {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) return {nullptr, "no OpenCL platform"};
  std::vector<cl_platform_id> platforms(np);
  if (clGetPlatformIDs(np, platforms.data(), nullptr) != CL_SUCCESS) return {nullptr, "clGetPlatformIDs failed"};
  for (cl_platform_id p : platforms) {
    cl_device_id d = nullptr;
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, &nd) != CL_SUCCESS || nd == 0) continue;
    char buf[256] = {};
    clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof buf - 1, buf, nullptr);
    return {d, buf};
  }
  return {nullptr, fmt::format("no OpenCL device on {} platform(s)", np)};
}

cl_ulong profile(cl_event e, cl_profiling_info what) {
  cl_ulong t = 0;
  cl_check(clGetEventProfilingInfo(e, what, sizeof t, &t, nullptr), "clGetEventProfilingInfo");
  return t;
}

struct ClblastSetup final : Setup {
  SgemmShape shape;
  std::string device;
  bool marker_timing = true;  // false: the device cannot time markers, only CLBlast's last kernel is timed
  TensorMap io;
  Context ctx;
  Queue queue;
  Buffer a, b, c, temp;

  Buffer upload(const Tensor& t, cl_mem_flags flags) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx.get(), flags | CL_MEM_COPY_HOST_PTR, t.nbytes(),
                              const_cast<std::byte*>(t.data()), &err);
    cl_check(err, "clCreateBuffer");
    return Buffer(m);
  }

  // One SGEMM; returns its device seconds. In-order queue: the marker ends when the queue reaches
  // the SGEMM, and CLBlast's event is its last kernel, so the span covers all of its kernels.
  double run() {
    Event before, done;
    cl_check(clEnqueueMarkerWithWaitList(queue.get(), 0, nullptr, before.out()), "clEnqueueMarkerWithWaitList");
    cl_command_queue q = queue.get();
    const auto st = clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kYes,
                                         shape.m, shape.n, shape.k, 1.0f, a.get(), 0, shape.k, b.get(), 0, shape.k,
                                         0.0f, c.get(), 0, shape.n, &q, done.out(), temp.get());
    check(st == clblast::StatusCode::kSuccess, "CLBlast Gemm returned status {}", int(st));
    cl_event wait = done.get();
    cl_check(clWaitForEvents(1, &wait), "clWaitForEvents");
    const cl_ulong end = profile(done.get(), CL_PROFILING_COMMAND_END);
    if (marker_timing) {
      cl_ulong start = 0;
      // A device that does not time markers reports an error or nonsense: fall back for good.
      if (clGetEventProfilingInfo(before.get(), CL_PROFILING_COMMAND_END, sizeof start, &start, nullptr) ==
              CL_SUCCESS &&
          start != 0 && start <= end)
        return double(end - start) * 1e-9;
      marker_timing = false;
    }
    return double(end - profile(done.get(), CL_PROFILING_COMMAND_START)) * 1e-9;
  }
};

std::unique_ptr<ClblastSetup> make_setup(const SgemmShape& shape, const Device& device) {
  auto s = std::make_unique<ClblastSetup>();
  s->shape = shape;
  s->device = device.name_or_reason;
  cl_device_id dev = device.id;
  cl_int err = CL_SUCCESS;
  *s->ctx.out() = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  cl_check(err, "clCreateContext");
  *s->queue.out() = clCreateCommandQueue(s->ctx.get(), dev, CL_QUEUE_PROFILING_ENABLE, &err);
  cl_check(err, "clCreateCommandQueue");
  s->io = sgemm_inputs(shape, 1);
  s->a = s->upload(s->io.at("a"), CL_MEM_READ_ONLY);
  s->b = s->upload(s->io.at("b"), CL_MEM_READ_ONLY);
  s->c = s->upload(s->io.at("out"), CL_MEM_READ_WRITE);
  // CLBlast's scratch for its indirect (padded) path, allocated once rather than on every call.
  size_t temp_bytes = 0;
  cl_command_queue q = s->queue.get();
  const auto st = clblast::GemmTempBufferSize<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                                     clblast::Transpose::kYes, shape.m, shape.n, shape.k, 0, shape.k,
                                                     0, shape.k, 0, shape.n, &q, temp_bytes);
  check(st == clblast::StatusCode::kSuccess, "CLBlast GemmTempBufferSize returned status {}", int(st));
  if (temp_bytes > 0) {
    *s->temp.out() = clCreateBuffer(s->ctx.get(), CL_MEM_READ_WRITE, temp_bytes, nullptr, &err);
    cl_check(err, "clCreateBuffer (CLBlast scratch)");
  }
  s->run();  // warm-up: CLBlast compiles its kernels for this device on first use
  return s;
}

void clblast_bench(benchmark::State& state, const SgemmShape& shape, const std::string& key) {
  static const Device device = first_device();
  if (!device.id) return state.SkipWithError(("unavailable: " + device.name_or_reason).c_str());
  ClblastSetup* s = nullptr;
  try {
    s = &setup_once<ClblastSetup>(key, [&] { return make_setup(shape, device); });
  } catch (const std::exception& e) {
    return state.SkipWithError(fmt::format("setup failed: {}", e.what()).c_str());
  }
  for (auto _ : state) {
    try {
      state.SetIterationTime(s->run());
    } catch (const std::exception& e) {
      release_setup();
      state.SkipWithError(e.what());
      break;
    }
  }
  if (state.error_occurred()) return;
  Tensor& out = s->io.at("out");
  const cl_int err = clEnqueueReadBuffer(s->queue.get(), s->c.get(), CL_TRUE, 0, out.nbytes(), out.data(), 0,
                                         nullptr, nullptr);
  if (err != CL_SUCCESS) return state.SkipWithError(fmt::format("reading C back: OpenCL error {}", err).c_str());
  const std::string bad = check_sgemm_sample(s->io.at("a").as<float>(), s->io.at("b").as<float>(), out.as<float>(),
                                             shape.m, shape.n, shape.k);
  if (!bad.empty()) return state.SkipWithError(("wrong result: " + bad).c_str());
  report_sgemm(state, shape, "CLBlast on " + s->device + (s->marker_timing ? "" : " (last kernel timed)"));
}

}  // namespace

void register_clblast_sgemm() {
  for (const SgemmShape& s : sgemm_shapes()) {
    const std::string name = "baseline/clblast_sgemm/" + s.preset;
    benchmark::RegisterBenchmark(name.c_str(), [s, name](benchmark::State& st) { clblast_bench(st, s, name); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace ts::bench
