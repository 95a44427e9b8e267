#pragma once
// The OpenCL runtime of the backend: one device, its context, an in-order profiling queue, and a
// program cache (one build per source + options per process). Everything the kernels need to know
// about the device (work-group and local-memory limits) comes from queries here.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <CL/cl.h>

#include "opencl/runtime/cl_error.h"

namespace ts::ocl {

// Owning handle of an OpenCL object, released with `Release`.
template <class T, cl_int (*Release)(T)> class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) { reset(); h_ = std::exchange(o.h_, nullptr); }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  T get() const { return h_; }
  void reset() {
    if (h_) Release(h_);
    h_ = nullptr;
  }

 private:
  T h_ = nullptr;
};
using Mem = Handle<cl_mem, clReleaseMemObject>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Program = Handle<cl_program, clReleaseProgram>;
using Event = Handle<cl_event, clReleaseEvent>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Context = Handle<cl_context, clReleaseContext>;

struct DeviceLimits {
  size_t max_work_group = 1;   // CL_DEVICE_MAX_WORK_GROUP_SIZE
  size_t local_mem = 0;        // CL_DEVICE_LOCAL_MEM_SIZE, bytes
  size_t max_alloc = 0;        // CL_DEVICE_MAX_MEM_ALLOC_SIZE, bytes
  cl_uint compute_units = 1;
  cl_uint base_align_bytes = 128;
  bool cpu = false;            // CL_DEVICE_TYPE_CPU: kernels pick their CPU-driver variants
};

class Runtime {
 public:
  // Opens the device TOUCHSTONE_OPENCL_DEVICE names (index or name substring; default the first).
  // Throws Error with the reason when there is no loader, no platform, or no matching device.
  Runtime();

  const std::string& device_name() const { return device_name_; }
  const DeviceLimits& limits() const { return limits_; }
  cl_context context() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }
  cl_device_id device() const { return device_; }

  // A kernel of kernels/<file> built with `options` (e.g. "-DDT_F16 -DTM=64"). The program is built
  // once per (file, options); each call returns a fresh cl_kernel so launches own their arguments.
  Kernel kernel(const std::string& file, const std::string& name, const std::string& options);

 private:
  cl_program program(const std::string& file, const std::string& options);

  cl_device_id device_ = nullptr;
  std::string device_name_;
  DeviceLimits limits_;
  Context context_;
  Queue queue_;
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Program> programs_;
};

}  // namespace ts::ocl
