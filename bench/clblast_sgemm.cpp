// baseline/clblast_sgemm/<gemm preset>: CLBlast SGEMM on the opencl backend's own device (its
// runtime: the same device choice, TOUCHSTONE_OPENCL_DEVICE included, and a profiling queue), timed
// with OpenCL profiling events: the OpenCL gemm figure to beat on the same device.
#include <clblast.h>

#include <exception>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "bench/baselines.h"
#include "bench/setup_cache.h"
#include "bench/sgemm_common.h"
#include "core/error.h"
#include "opencl/runtime/runtime.h"

namespace ts::bench {

namespace {

using ocl::Event;
using ocl::Mem;

cl_ulong profile(cl_event e, cl_profiling_info what) {
  cl_ulong t = 0;
  CL_CHECK(clGetEventProfilingInfo(e, what, sizeof t, &t, nullptr));
  return t;
}

struct ClblastSetup final : Setup {
  SgemmShape shape;
  ocl::Runtime* rt = nullptr;
  bool marker_timing = true;  // false: the device cannot time markers, only CLBlast's last kernel is timed
  TensorMap io;
  Mem a, b, c, temp;

  Mem upload(const Tensor& t, cl_mem_flags flags) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(rt->context(), flags | CL_MEM_COPY_HOST_PTR, t.nbytes(),
                              const_cast<std::byte*>(t.data()), &err);
    ocl::cl_check(err, "clCreateBuffer");
    return Mem(m);
  }

  // One SGEMM; returns its device seconds. In-order queue: the marker ends when the queue reaches
  // the SGEMM, and CLBlast's event is its last kernel, so the span covers all of its kernels.
  double run() {
    cl_command_queue q = rt->queue();
    cl_event marker = nullptr, last = nullptr;
    CL_CHECK(clEnqueueMarkerWithWaitList(q, 0, nullptr, &marker));
    const Event before(marker);
    const auto st = clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kYes,
                                         shape.m, shape.n, shape.k, 1.0f, a.get(), 0, shape.k, b.get(), 0, shape.k,
                                         0.0f, c.get(), 0, shape.n, &q, &last, temp.get());
    check(st == clblast::StatusCode::kSuccess, "CLBlast Gemm returned status {}", int(st));
    const Event done(last);
    CL_CHECK(clWaitForEvents(1, &last));
    const cl_ulong end = profile(last, CL_PROFILING_COMMAND_END);
    if (marker_timing) {
      cl_ulong start = 0;
      // A device that does not time markers reports an error or nonsense: fall back for good.
      if (clGetEventProfilingInfo(marker, CL_PROFILING_COMMAND_END, sizeof start, &start, nullptr) == CL_SUCCESS &&
          start != 0 && start <= end)
        return double(end - start) * 1e-9;
      marker_timing = false;
    }
    return double(end - profile(last, CL_PROFILING_COMMAND_START)) * 1e-9;
  }
};

std::unique_ptr<ClblastSetup> make_setup(const SgemmShape& shape, ocl::Runtime& rt) {
  auto s = std::make_unique<ClblastSetup>();
  s->shape = shape;
  s->rt = &rt;
  s->io = sgemm_inputs(shape, 1);
  s->a = s->upload(s->io.at("a"), CL_MEM_READ_ONLY);
  s->b = s->upload(s->io.at("b"), CL_MEM_READ_ONLY);
  s->c = s->upload(s->io.at("out"), CL_MEM_READ_WRITE);
  // CLBlast's scratch for its indirect (padded) path, allocated once rather than on every call.
  size_t temp_bytes = 0;
  cl_command_queue q = rt.queue();
  const auto st = clblast::GemmTempBufferSize<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                                     clblast::Transpose::kYes, shape.m, shape.n, shape.k, 0, shape.k,
                                                     0, shape.k, 0, shape.n, &q, temp_bytes);
  check(st == clblast::StatusCode::kSuccess, "CLBlast GemmTempBufferSize returned status {}", int(st));
  if (temp_bytes > 0) {
    cl_int err = CL_SUCCESS;
    s->temp = Mem(clCreateBuffer(rt.context(), CL_MEM_READ_WRITE, temp_bytes, nullptr, &err));
    ocl::cl_check(err, "clCreateBuffer (CLBlast scratch)");
  }
  s->run();  // warm-up: CLBlast compiles its kernels for this device on first use
  return s;
}

// The opencl backend's runtime, or why there is none (no platform, no device, a bad device choice).
ocl::Runtime* runtime(std::string& why) {
  static std::string reason;
  static std::unique_ptr<ocl::Runtime> rt = [] {
    try {
      return std::make_unique<ocl::Runtime>();
    } catch (const std::exception& e) {
      reason = e.what();
      return std::unique_ptr<ocl::Runtime>();
    }
  }();
  why = reason;
  return rt.get();
}

void clblast_bench(benchmark::State& state, const SgemmShape& shape, const std::string& key) {
  std::string why;
  ocl::Runtime* rt = runtime(why);
  if (!rt) return state.SkipWithError(("unavailable: " + why).c_str());
  ClblastSetup* s = setup_or_skip<ClblastSetup>(state, key, [&] { return make_setup(shape, *rt); });
  if (!s) return;
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
  const cl_int err =
      clEnqueueReadBuffer(rt->queue(), s->c.get(), CL_TRUE, 0, out.nbytes(), out.data(), 0, nullptr, nullptr);
  if (err != CL_SUCCESS)
    return state.SkipWithError(fmt::format("reading C back: {}", ocl::cl_error_name(err)).c_str());
  const std::string bad = check_sgemm_sample(s->io.at("a").as<float>(), s->io.at("b").as<float>(), out.as<float>(),
                                             shape.m, shape.n, shape.k);
  if (!bad.empty()) return state.SkipWithError(("wrong result: " + bad).c_str());
  report_sgemm(state, shape, "CLBlast on " + rt->device_name() + (s->marker_timing ? "" : " (last kernel timed)"));
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
