#pragma once
// A backend that runs on host memory: the tensors given to prepare() are the buffers. The reference
// and the cpu backend are this, with different kernel tables. Kernels are registered typed:
//   kernels.add<GemmParams>("gemm", [](const GemmParams& p, TensorMap& t) { ... });
#include <chrono>
#include <map>

#include "core/backend.h"

namespace ts {

using HostKernel = std::function<void(const Params&, TensorMap&)>;

class KernelTable {
 public:
  template <class P> void add(const std::string& op, std::function<void(const P&, TensorMap&)> fn) {
    table_[op] = [fn = std::move(fn)](const Params& p, TensorMap& t) { fn(p.as<P>(), t); };
  }
  // Declares an op the backend knows about but cannot run, with the reason.
  void unsupported(const std::string& op, std::string why) { missing_[op] = std::move(why); }
  const HostKernel* find(const std::string& op) const;
  const std::string* missing_reason(const std::string& op) const;

 private:
  std::map<std::string, HostKernel> table_;
  std::map<std::string, std::string> missing_;
};

class HostBackend : public Backend {
 public:
  HostBackend(std::string name, KernelTable kernels) : name_(std::move(name)), kernels_(std::move(kernels)) {}
  std::string name() const override { return name_; }
  Availability availability() override;
  Support supports(const Op& op, DType dt) override;
  std::unique_ptr<Launch> prepare(const Op& op, const Params& p, TensorMap& io) override;

 private:
  std::string name_;
  KernelTable kernels_;
};

}  // namespace ts
