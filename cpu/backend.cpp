#include "cpu/backend.h"

#include "core/error.h"
#include "core/host_backend.h"
#include "core/tensor_parallel.h"
#include "cpu/kernels.h"
#include "cpu/runtime/simd_target.h"
#include "cpu/runtime/thread_pool.h"

namespace ts {

namespace {

// The host backend, unavailable when TOUCHSTONE_CPU_SIMD names a target it cannot use.
class CpuHostBackend final : public HostBackend {
 public:
  using HostBackend::HostBackend;
  Availability availability() override {
    try {
      return {true, "host CPU, SIMD " + cpu::select_simd_target()};
    } catch (const Error& e) {
      return {false, e.what()};
    }
  }
  // The tensor-parallel pair: this backend's own gemm twice and its all_reduce (core/tensor_parallel.h).
  Support supports(const Problem& pr) override {
    return is_tensor_parallel(*pr.op) ? tensor_parallel_support(*this, pr) : HostBackend::supports(pr);
  }
  std::unique_ptr<Launch> prepare(const Problem& pr, TensorMap& io) override {
    return is_tensor_parallel(*pr.op) ? prepare_tensor_parallel(*this, pr, io) : HostBackend::prepare(pr, io);
  }
  void park_host_threads() override { cpu::park_workers(); }
  void wake_host_threads() override { cpu::wake_workers(); }
};

}  // namespace

std::unique_ptr<Backend> CpuBackend::create() {
  // Before any kernel dispatches: Highway fixes its choice at the first call. A bad name is kept
  // and reported by availability().
  try {
    cpu::select_simd_target();
  } catch (const Error&) {
  }
  KernelTable k;
  cpu::add_gemm(k);
  cpu::add_norms(k);
  cpu::add_elementwise(k);
  cpu::add_layout(k);
  cpu::add_rope(k);
  cpu::add_attention(k);
  cpu::add_paged_attention(k);
  cpu::add_paged_split(k);
  cpu::add_kv_append(k);
  cpu::add_argmax(k);
  cpu::add_quant(k);
  cpu::add_gptq_awq(k);
  cpu::add_moe_route(k);
  cpu::add_moe_experts(k);
  cpu::add_moe_combine(k);
  cpu::add_collective(k);
  return std::make_unique<CpuHostBackend>(kName, std::move(k));
}

}  // namespace ts
