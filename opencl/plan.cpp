#include "opencl/plan.h"

#include "opencl/kernels/args.h"

#include "core/unsupported.h"

#include <algorithm>
#include <limits>

namespace ts::ocl {

cl_mem Planner::buf(const std::string& name) const {
  auto it = bufs_.find(name);
  check(it != bufs_.end(), "OpenCL planner: no tensor '{}'", name);
  return it->second.data.get();
}

const TensorDecl& Planner::decl(const std::string& name) const {
  const TensorDecl* d = pr_.decl(name);
  check(d != nullptr, "OpenCL planner: {} declares no tensor '{}'", pr_.op->name(), name);
  return *d;
}

Kernel Planner::kernel(const std::string& file, const std::string& name, const std::string& defines) {
  const DType t = pr_.dtype;
  const char* dt = t == DType::F16 ? "-DDT_F16" : t == DType::BF16 ? "-DDT_BF16" : "-DDT_F32";
  return rt_.kernel(file, name, std::string(dt) + (defines.empty() ? "" : " " + defines));
}

size_t Planner::reduction_group(int64_t n, size_t cap) const {
  size_t g = 1;
  while (g * 2 <= cap && g * 2 <= limits().max_work_group && static_cast<int64_t>(g) < n) g *= 2;
  return g;
}

cl_mem Planner::scratch(size_t bytes) {
  supported_only_if(bytes <= limits().max_alloc,
        "OpenCL planner: scratch buffer of {} bytes exceeds the device's largest allocation ({} bytes)", bytes,
        limits().max_alloc);
  cl_int rc = CL_SUCCESS;
  Mem m(clCreateBuffer(rt_.context(), CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1), nullptr, &rc));
  CL_CHECK(rc);
  return keep(std::move(m));
}

// Kept with the tensors' buffers, under a name no tensor has ('#'), so the Launch owns it.
cl_mem Planner::keep(Mem m) {
  const cl_mem h = m.get();
  DeviceTensor d;
  d.data = std::move(m);
  bufs_.emplace(fmt::format("#scratch{}", scratch_count_++), std::move(d));
  return h;
}

cl_mem Planner::ints(const std::vector<int32_t>& values) {
  const size_t bytes = values.size() * sizeof(int32_t);
  if (bytes == 0) return scratch(sizeof(int32_t));
  supported_only_if(bytes <= limits().max_alloc, "OpenCL planner: a table of {} bytes exceeds the device's largest allocation",
        bytes);
  cl_int rc = CL_SUCCESS;
  Mem m(clCreateBuffer(rt_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                       const_cast<int32_t*>(values.data()), &rc));
  CL_CHECK(rc);
  return keep(std::move(m));
}

cl_mem Planner::constant_bytes(const void* p, size_t n) {
  cl_int rc = CL_SUCCESS;
  Mem m(clCreateBuffer(rt_.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n, const_cast<void*>(p), &rc));
  CL_CHECK(rc);
  return keep(std::move(m));
}

int32_t arg_i32(int64_t v, const char* field) {
  supported_only_if(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
                    "OpenCL: kernel argument {} = {} does not fit in 32 bits", field, v);
  return static_cast<int32_t>(v);
}

void Planner::set_arg(cl_kernel k, cl_uint i, cl_mem m) {
  CL_CHECK(clSetKernelArg(k, i, sizeof m, &m));
  mem_args_.push_back({i, m});
}

void Planner::set_arg(cl_kernel k, cl_uint i, int64_t v) {
  supported_only_if(v >= std::numeric_limits<cl_int>::min() && v <= std::numeric_limits<cl_int>::max(),
        "OpenCL: kernel argument {} = {} does not fit in 32 bits", i, v);
  const cl_int x = static_cast<cl_int>(v);
  CL_CHECK(clSetKernelArg(k, i, sizeof x, &x));
}

void Planner::set_arg(cl_kernel k, cl_uint i, float v) { CL_CHECK(clSetKernelArg(k, i, sizeof v, &v)); }

void Planner::set_arg(cl_kernel k, cl_uint i, LocalBytes b) { CL_CHECK(clSetKernelArg(k, i, b.n, nullptr)); }

void Planner::add(Kernel k, std::vector<size_t> global, std::vector<size_t> local) {
  check(!global.empty() && global.size() <= 3 && global.size() == local.size(), "OpenCL planner: bad NDRange");
  Dispatch d;
  d.kernel = std::move(k);
  d.dims = static_cast<cl_uint>(global.size());
  d.mem_args = std::move(mem_args_);
  size_t group = 1;
  for (size_t i = 0; i < global.size(); ++i) {
    d.local[i] = local[i];
    d.global[i] = (global[i] + local[i] - 1) / local[i] * local[i];
    group *= local[i];
  }
  supported_only_if(group <= limits().max_work_group, "OpenCL planner: work-group of {} exceeds the device's {}", group,
        limits().max_work_group);
  // An empty range would be an OpenCL error; there is simply nothing to do.
  for (size_t i = 0; i < global.size(); ++i)
    if (d.global[i] == 0) return;
  out_.push_back(std::move(d));
}

}  // namespace ts::ocl
