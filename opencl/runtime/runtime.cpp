#include "opencl/runtime/runtime.h"

#include <cstdlib>
#include <vector>

#include "core/comm.h"
#include "core/tensor.h"
#include "opencl/runtime/embedded.h"

namespace ts::ocl {
namespace {

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  CL_CHECK(clGetDeviceInfo(d, what, 0, nullptr, &n));
  std::string s(n, '\0');
  CL_CHECK(clGetDeviceInfo(d, what, n, s.data(), nullptr));
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <class T> T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  CL_CHECK(clGetDeviceInfo(d, what, sizeof v, &v, nullptr));
  return v;
}

std::vector<cl_device_id> all_devices() {
  cl_uint np = 0;
  const cl_int rc = clGetPlatformIDs(0, nullptr, &np);
  if (rc == -1001 || np == 0) fail("no OpenCL platform (is an ICD such as pocl-opencl-icd installed?)");
  CL_CHECK(rc);
  std::vector<cl_platform_id> platforms(np);
  CL_CHECK(clGetPlatformIDs(np, platforms.data(), nullptr));
  std::vector<cl_device_id> out;
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ds(nd);
    CL_CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr));
    out.insert(out.end(), ds.begin(), ds.end());
  }
  if (out.empty()) fail("no OpenCL device on any platform");
  return out;
}

cl_device_id choose_device(const std::vector<cl_device_id>& ds) {
  const char* env = std::getenv("TOUCHSTONE_OPENCL_DEVICE");
  // Ranks of an MPI launch take one device each, round robin, where the machine has several.
  if (!env || !*env) return ds[static_cast<size_t>(world().rank()) % ds.size()];
  const std::string want = env;
  if (want.find_first_not_of("0123456789") == std::string::npos) {
    const size_t i = std::stoul(want);
    check(i < ds.size(), "TOUCHSTONE_OPENCL_DEVICE={}: only {} OpenCL device(s)", want, ds.size());
    return ds[i];
  }
  for (cl_device_id d : ds)
    if (device_string(d, CL_DEVICE_NAME).find(want) != std::string::npos) return d;
  fail("TOUCHSTONE_OPENCL_DEVICE={}: no OpenCL device name contains it", want);
}

std::string_view embedded(const std::string& name) {
  for (const auto& f : embedded_kernels())
    if (f.name == name) return f.text;
  fail("OpenCL kernel file '{}' is not embedded", name);
}

// The kernel file with each line `#include "name"` replaced by that embedded file (itself expanded):
// the driver has no include path to the embedded sources, so shared kernel headers are inlined here.
std::string with_includes(const std::string& file, int depth = 0) {
  check(depth < 8, "OpenCL kernel file '{}': includes nested too deep", file);
  const std::string_view text = embedded(file);
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    constexpr std::string_view kInclude = "#include \"";
    if (line.substr(0, kInclude.size()) == kInclude) {
      const size_t close = line.find('"', kInclude.size());
      check(close != std::string_view::npos, "OpenCL kernel file '{}': malformed '{}'", file, line);
      out += with_includes(std::string(line.substr(kInclude.size(), close - kInclude.size())), depth + 1);
    } else {
      out += line;
    }
    out += '\n';
    pos = end + 1;
  }
  return out;
}

}  // namespace

Runtime::Runtime() {
  device_ = choose_device(all_devices());
  device_name_ = device_string(device_, CL_DEVICE_NAME);
  const std::string version = device_string(device_, CL_DEVICE_OPENCL_C_VERSION);
  check(version.rfind("OpenCL C 1.0", 0) != 0 && version.rfind("OpenCL C 1.1", 0) != 0,
        "{}: OpenCL C 1.2 required, the device offers '{}'", device_name_, version);
  limits_.max_work_group = device_value<size_t>(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  limits_.local_mem = static_cast<size_t>(device_value<cl_ulong>(device_, CL_DEVICE_LOCAL_MEM_SIZE));
  limits_.max_alloc = static_cast<size_t>(device_value<cl_ulong>(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  limits_.compute_units = device_value<cl_uint>(device_, CL_DEVICE_MAX_COMPUTE_UNITS);
  limits_.cpu = (device_value<cl_device_type>(device_, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
  // TOUCHSTONE_OPENCL_GPU_TUNING=1 runs the GPU kernel variants on any device (to test them on PoCL).
  if (const char* g = std::getenv("TOUCHSTONE_OPENCL_GPU_TUNING"); g && std::string(g) == "1") limits_.cpu = false;
  limits_.base_align_bytes = device_value<cl_uint>(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;
  check(kGuardBytes % limits_.base_align_bytes == 0, "{}: sub-buffer alignment {} does not divide the guard zone",
        device_name_, limits_.base_align_bytes);
  cl_int rc = CL_SUCCESS;
  context_ = Context(clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &rc));
  CL_CHECK(rc);
  queue_ = Queue(clCreateCommandQueue(context_.get(), device_, CL_QUEUE_PROFILING_ENABLE, &rc));
  CL_CHECK(rc);
}

cl_program Runtime::program(const std::string& file, const std::string& options) {
  std::lock_guard lock(mu_);
  auto key = std::make_pair(file, options);
  if (auto it = programs_.find(key); it != programs_.end()) return it->second.get();
  // Every kernel file starts with the shared dtype header; its own includes are inlined.
  const std::string source = std::string(embedded("common.h")) + "\n" + with_includes(file);
  const char* text = source.c_str();
  cl_int rc = CL_SUCCESS;
  Program prog(clCreateProgramWithSource(context_.get(), 1, &text, nullptr, &rc));
  CL_CHECK(rc);
  const std::string opts = "-cl-std=CL1.2 " + options;
  rc = clBuildProgram(prog.get(), 1, &device_, opts.c_str(), nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(prog.get(), device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(prog.get(), device_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    fail("OpenCL: building {} with '{}' failed: {}\n{}", file, options, cl_error_name(rc), log);
  }
  return programs_.emplace(key, std::move(prog)).first->second.get();
}

Kernel Runtime::kernel(const std::string& file, const std::string& name, const std::string& options) {
  cl_program prog = program(file, options);
  cl_int rc = CL_SUCCESS;
  Kernel k(clCreateKernel(prog, name.c_str(), &rc));
  if (rc != CL_SUCCESS) fail("OpenCL: clCreateKernel({}, {}) failed: {}", file, name, cl_error_name(rc));
  return k;
}

}  // namespace ts::ocl
