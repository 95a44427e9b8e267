#pragma once
// A backend that runs on host memory: the tensors given to prepare() are the buffers. The reference
// and the cpu backend are this, with different kernel tables. Kernels are registered typed, against
// the op's identity (core/ops/op_refs.h), so the name cannot be misspelt and the parameter struct is
// the op's:
//   kernels.add(ops::gemm, [](const GemmParams& p, TensorMap& t) { ... });
//   kernels.add(ops::gemm_quant, run, [](const Problem& pr) { ... a "no" for kinds not written yet });
// A kernel that works once per prepare, as the seed's load_quant does (weights repacked into the
// backend's own layout), registers a function that does that work and returns what execute() runs:
//   kernels.add_prepared(ops::gemm_gptq, [](const GptqParams& p, TensorMap& t) -> HostRun { ... });
// The benchmark times the prepare and the executes apart (bench/op_benches.cpp: prepare_seconds).
#include <chrono>
#include <map>
#include <type_traits>

#include "core/backend.h"
#include "core/ops/op_refs.h"

namespace ts {

using HostKernel = std::function<void(const Params&, TensorMap&)>;
// What execute() runs for a kernel with a prepare step; it may hold state made at prepare (repacked
// weights) and reads and writes the tensors given to prepare.
using HostRun = std::function<void()>;
using HostPrepareFn = std::function<HostRun(const Params&, TensorMap&)>;
using SupportFn = std::function<Support(const Problem&)>;
// A kernel's own tolerance for some of its cases (Backend::tolerance); nullopt: the op's.
// `inputs`: the case's tensors, for a bound that reads the data (the int8 route's activation blocks).
using ToleranceFn =
    std::function<std::optional<Tolerance>(const Problem&, const std::string& output, const TensorMap& inputs)>;

class KernelTable {
 public:
  struct Entry {
    HostKernel run;          // either this, run on every execute()
    HostPrepareFn prepare;   // or this, run once per prepare()
    SupportFn supports;  // empty: every case of the op; else a "no" with the reason for the rest
    ToleranceFn tolerance;  // empty: the op's tolerance for every case
  };

  template <class P>
  void add(OpRef<P> op, std::type_identity_t<std::function<void(const P&, TensorMap&)>> fn,
           SupportFn supports = {}, ToleranceFn tolerance = {}) {
    table_[std::string(op.name)] = Entry{[fn = std::move(fn)](const Params& p, TensorMap& t) { fn(p.as<P>(), t); },
                                         {}, std::move(supports), std::move(tolerance)};
  }
  template <class P>
  void add_prepared(OpRef<P> op, std::type_identity_t<std::function<HostRun(const P&, TensorMap&)>> fn,
                    SupportFn supports = {}, ToleranceFn tolerance = {}) {
    table_[std::string(op.name)] = Entry{{}, [fn = std::move(fn)](const Params& p, TensorMap& t) { return fn(p.as<P>(), t); },
                                         std::move(supports), std::move(tolerance)};
  }
  const Entry* find(std::string_view op) const;

 private:
  std::map<std::string, Entry, std::less<>> table_;
};

class HostBackend : public Backend {
 public:
  HostBackend(std::string name, KernelTable kernels) : name_(std::move(name)), kernels_(std::move(kernels)) {}
  std::string name() const override { return name_; }
  Availability availability() override;
  Support supports(const Problem& pr) override;
  std::optional<Tolerance> tolerance(const Problem& pr, const std::string& output, const TensorMap& inputs) override;
  std::unique_ptr<Launch> prepare(const Problem& pr, TensorMap& io) override;

 private:
  std::string name_;
  KernelTable kernels_;
};

}  // namespace ts
