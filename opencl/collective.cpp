// The collective family on OpenCL: this rank's x and out in device buffers (the whole storage, guards
// included, as every other op's). Where the device shares the host's memory (CL_DEVICE_HOST_UNIFIED_MEMORY:
// PoCL, an integrated GPU) the buffers are the driver's host-reachable allocations (CL_MEM_ALLOC_HOST_PTR)
// and the host collective runs on them mapped, no copy; elsewhere (a discrete GPU) x is staged through
// host memory with blocking reads and writes of the data region around the host collective
// (core/collective.h). The launch times either apart from the collective.
#include "core/collective.h"
#include "opencl/collective.h"
#include "opencl/runtime/cl_error.h"

namespace ts::ocl {

namespace {

class ClCollectiveLaunch final : public StagedCollectiveLaunch {
 public:
  ClCollectiveLaunch(Runtime& rt, const Problem& pr, TensorMap& io)
      : StagedCollectiveLaunch(pr, io), rt_(rt), maps_(!collective_staging_forced() && host_unified(rt.device())) {
    for (const std::string& name : {x_name(), out_name()}) {
      Tensor& t = io_.at(name);
      cl_int rc = CL_SUCCESS;
      const cl_mem_flags where = maps_ ? CL_MEM_ALLOC_HOST_PTR : 0;
      bufs_.emplace(name, Mem(clCreateBuffer(rt_.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR | where,
                                             t.storage_bytes(), t.storage(), &rc)));
      CL_CHECK(rc);
    }
    agree();
  }
  bool maps() const override { return maps_; }

 private:
  static bool host_unified(cl_device_id d) {
    cl_bool unified = CL_FALSE;
    return clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, nullptr) == CL_SUCCESS &&
           unified == CL_TRUE;
  }
  // x mapped for reading, out for writing with its old contents dropped; queued, and waited on once
  // for both (maps_ready), so the host reads what the device's earlier commands wrote.
  void* map_data(const std::string& name, size_t bytes, bool write) override {
    cl_int rc = CL_SUCCESS;
    void* p = clEnqueueMapBuffer(rt_.queue(), bufs_.at(name).get(), CL_FALSE,
                                 write ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ, kGuardBytes, bytes, 0, nullptr,
                                 nullptr, &rc);
    CL_CHECK(rc);
    return p;
  }
  void maps_ready() override { CL_CHECK(clFinish(rt_.queue())); }
  // Unmaps queued and waited on once (unmaps_ready): the device's later commands (finish()'s read)
  // see what the host wrote.
  void unmap_data(const std::string& name, void* host) override {
    CL_CHECK(clEnqueueUnmapMemObject(rt_.queue(), bufs_.at(name).get(), host, 0, nullptr, nullptr));
  }
  void unmaps_ready() override { CL_CHECK(clFinish(rt_.queue())); }
  void upload(const std::string& name) override {
    const Tensor& t = io_.at(name);
    CL_CHECK(clEnqueueWriteBuffer(rt_.queue(), bufs_.at(name).get(), CL_TRUE, 0, t.storage_bytes(), t.storage(), 0,
                                  nullptr, nullptr));
  }
  void download(const std::string& name) override {
    Tensor& t = io_.at(name);
    CL_CHECK(clEnqueueReadBuffer(rt_.queue(), bufs_.at(name).get(), CL_TRUE, 0, t.storage_bytes(), t.storage(), 0,
                                 nullptr, nullptr));
  }
  void read_data(const std::string& name, void* host, size_t bytes) override {
    if (bytes)
      CL_CHECK(clEnqueueReadBuffer(rt_.queue(), bufs_.at(name).get(), CL_TRUE, kGuardBytes, bytes, host, 0, nullptr,
                                   nullptr));
  }
  void write_data(const std::string& name, const void* host, size_t bytes) override {
    if (bytes)
      CL_CHECK(clEnqueueWriteBuffer(rt_.queue(), bufs_.at(name).get(), CL_TRUE, kGuardBytes, bytes, host, 0, nullptr,
                                    nullptr));
  }

  Runtime& rt_;
  const bool maps_;
  std::map<std::string, Mem> bufs_;
};

}  // namespace

Support collective_support(const Problem& pr) { return device_collective_support(pr, "OpenCL collective"); }

std::unique_ptr<Launch> prepare_collective(Runtime& rt, const Problem& pr, TensorMap& io) {
  return std::make_unique<ClCollectiveLaunch>(rt, pr, io);
}

}  // namespace ts::ocl
