#pragma once
// How an op becomes device work: a planner (one per op, in the family files opencl/<engine>/*.cpp)
// reads the parameters, picks kernels and variants, binds the op's buffers and appends dispatches. The Launch
// then replays those dispatches on every execute(), also after new input values were written into the
// same buffers (Launch::upload_inputs). So a planner sees the problem (parameters, each tensor's shape
// and dtype) and never a tensor's values: what depends on them (lengths, tables, ids, positions) is
// decided by the kernels on the device, within a grid sized from the parameters.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "core/backend.h"
#include "core/ops/op_refs.h"
#include "opencl/runtime/runtime.h"

namespace ts::ocl {

// One tensor on the device: the whole storage (guards included) and a sub-buffer from the data on.
struct DeviceTensor {
  Mem storage, data;
};

struct Dispatch {
  Kernel kernel;
  cl_uint dims = 1;
  size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  // The buffer arguments by index: a recorded step rebinds a tensor to a buffer shared between
  // launches (a KV pool) by finding its sub-buffer here.
  std::vector<std::pair<cl_uint, cl_mem>> mem_args;
};

// `n` bytes of __local memory as a kernel argument.
struct LocalBytes {
  size_t n;
};

class Planner {
 public:
  Planner(Runtime& rt, const Problem& pr, std::map<std::string, DeviceTensor>& bufs) : rt_(rt), pr_(pr), bufs_(bufs) {}

  template <class P> const P& params() const { return pr_.params.as<P>(); }
  DType dtype() const { return pr_.dtype; }
  const DeviceLimits& limits() const { return rt_.limits(); }
  // A declared tensor: its shape and dtype (Error when the op declares none of that name).
  const TensorDecl& decl(const std::string& name) const;
  cl_mem buf(const std::string& name) const;  // the data sub-buffer of a tensor

  // A kernel of `file` built for the case's dtype plus `defines` ("-DTM=64 ...").
  Kernel kernel(const std::string& file, const std::string& name, const std::string& defines = "");

  // Appends a dispatch; each global size is rounded up to a multiple of its local size.
  template <class... A>
  void dispatch(Kernel k, std::vector<size_t> global, std::vector<size_t> local, const A&... args) {
    cl_uint i = 0;
    mem_args_.clear();
    (set_arg(k.get(), i++, args), ...);
    add(std::move(k), std::move(global), std::move(local));
  }

  std::vector<Dispatch> take() { return std::move(out_); }

  // A device buffer of `bytes` for intermediate results, owned by the Launch like the tensors'.
  cl_mem scratch(size_t bytes);
  // A device buffer holding `values`, built on the host at plan time from the parameters (per-row
  // indices a kernel takes as a table).
  cl_mem ints(const std::vector<int32_t>& values);
  // A read-only buffer holding an engine's argument struct (kernels/args.h), which its kernel reads
  // through a __constant pointer.
  template <class S> cl_mem args(const S& s) {
    static_assert(std::is_trivially_copyable_v<S>);
    return constant_bytes(&s, sizeof s);
  }

  // A work-group size for a 1-D reduction over `n` elements: a power of two within the device limit.
  size_t reduction_group(int64_t n, size_t cap = 256) const;

 private:
  void set_arg(cl_kernel k, cl_uint i, cl_mem m);
  static void set_arg(cl_kernel k, cl_uint i, int64_t v);  // as a checked 32-bit int
  static void set_arg(cl_kernel k, cl_uint i, int v) { set_arg(k, i, int64_t{v}); }
  static void set_arg(cl_kernel k, cl_uint i, float v);
  static void set_arg(cl_kernel k, cl_uint i, LocalBytes b);
  void add(Kernel k, std::vector<size_t> global, std::vector<size_t> local);
  cl_mem keep(Mem m);
  cl_mem constant_bytes(const void* p, size_t n);

  Runtime& rt_;
  const Problem& pr_;
  std::map<std::string, DeviceTensor>& bufs_;
  std::vector<Dispatch> out_;
  std::vector<std::pair<cl_uint, cl_mem>> mem_args_;  // of the dispatch being set up
  int scratch_count_ = 0;
};

using PlanFn = std::function<void(Planner&)>;
// Per op: its planner, and optionally which of its problems it takes (empty: every one the
// backend's dtype gate lets through). Registered against the op's identity (core/ops/op_refs.h).
struct PlanEntry {
  PlanFn plan;
  std::function<Support(const Problem&)> supports;
};
using PlanTable = std::map<std::string, PlanEntry, std::less<>>;
template <class P>
void add_plan(PlanTable& t, OpRef<P> op, PlanFn fn, std::function<Support(const Problem&)> supports = {}) {
  t[std::string(op.name)] = {std::move(fn), std::move(supports)};
}

// Each family file adds its ops' planners.
void add_linear_ops(PlanTable& t);           // opencl/dense/gemm.cpp
void add_norm_ops(PlanTable& t);             // opencl/dense/norms.cpp
void add_elementwise_ops(PlanTable& t);      // opencl/dense/elementwise.cpp
void add_layout_ops(PlanTable& t);           // opencl/dense/layout.cpp
void add_rope_ops(PlanTable& t);             // opencl/dense/rope.cpp
void add_attention_ops(PlanTable& t);        // opencl/attention/attention.cpp
void add_argmax_ops(PlanTable& t);           // opencl/dense/argmax.cpp
void add_quant_ops(PlanTable& t);            // opencl/quant/quant_gemm.cpp
void add_paged_attention_ops(PlanTable& t);  // opencl/attention/paged_attention.cpp
void add_paged_split_ops(PlanTable& t);      // opencl/attention/paged_split.cpp
void add_kv_append_ops(PlanTable& t);        // opencl/attention/kv_append.cpp
void add_moe_route_ops(PlanTable& t);        // opencl/moe/moe_route.cpp
void add_moe_expert_ops(PlanTable& t);       // opencl/moe/moe_experts.cpp
void add_moe_combine_ops(PlanTable& t);      // opencl/moe/moe_combine.cpp

// Ceil division for dispatch sizes.
inline size_t ceil_div(int64_t a, int64_t b) { return static_cast<size_t>((a + b - 1) / b); }

}  // namespace ts::ocl
