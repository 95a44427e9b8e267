// The collective family on OpenCL: this rank's x and out in device buffers (the whole storage, guards
// included, as every other op's), staged through host memory around the host collective
// (core/collective.h). Blocking reads and writes of the data region: on a CPU driver (PoCL) they are
// memcpys, on a discrete GPU PCIe transfers, and the launch times them apart either way.
#include "core/collective.h"
#include "opencl/collective.h"
#include "opencl/cl_error.h"

namespace ts::ocl {

namespace {

class ClCollectiveLaunch final : public StagedCollectiveLaunch {
 public:
  ClCollectiveLaunch(Runtime& rt, const Problem& pr, TensorMap& io) : StagedCollectiveLaunch(pr, io), rt_(rt) {
    for (const std::string& name : {x_name(), out_name()}) {
      Tensor& t = io_.at(name);
      cl_int rc = CL_SUCCESS;
      bufs_.emplace(name, Mem(clCreateBuffer(rt_.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                             t.storage_bytes(), t.storage(), &rc)));
      CL_CHECK(rc);
    }
    agree();
  }

 private:
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
  std::map<std::string, Mem> bufs_;
};

}  // namespace

Support collective_support(const Problem& pr) { return device_collective_support(pr, "OpenCL collective"); }

std::unique_ptr<Launch> prepare_collective(Runtime& rt, const Problem& pr, TensorMap& io) {
  return std::make_unique<ClCollectiveLaunch>(rt, pr, io);
}

}  // namespace ts::ocl
