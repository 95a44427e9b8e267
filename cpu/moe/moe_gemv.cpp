// The moe family's expert GEMV / GEMM ops on the cpu: adapters over the one engine
// (cpu/moe/moe_experts.h), their pairs (activation row, expert, output row) from each op's pair view
// (core/ops/moe/pair_view.h).
#include <vector>

#include "core/ops/moe_params.h"
#include "cpu/kernels.h"
#include "cpu/moe/moe_experts.h"
#include "cpu/runtime/common.h"

namespace ts::cpu {
namespace {

// The GEMVs' pairs from their view, experts from ids.
template <class P> moe::Sites sites(const P& p, const TensorMap& t) {
  moe::Sites s;
  const ts::moe::PairView v = ts::moe::pair_view(p);
  s.reserve(static_cast<size_t>(v.pairs));
  ts::moe::for_each_pair(v, t.at("ids").as<int32_t>(), [&](const moe::Site& x) { s.push_back(x); });
  return s;
}

// The prefill GEMM's pairs as the experts' lists name them.
moe::Sites listed(const GemmQuantMoeIdParams& p, const TensorMap& t) {
  moe::Sites s;
  ts::moe::for_each_listed(p, t.at("ids").as<int32_t>(), t.at("tpe").as<int32_t>(),
                           [&](const moe::Site& x) { s.push_back(x); });
  return s;
}

void gemv(const MoeExperts& w, TensorMap& t, const moe::Sites& sites) {
  moe::gemv(moe::Stack(w, tensor(t, "weights")), nullptr, tensor(t, "a"), sites, tensor(t, "out"));
}

void gate_up_silu(const MoeExperts& w, TensorMap& t, const moe::Sites& sites) {
  const moe::Stack up(w, tensor(t, "up_w"));
  moe::gemv(moe::Stack(w, tensor(t, "gate_w")), &up, tensor(t, "a"), sites, tensor(t, "silu_out"));
}

void gemm(const GemmQuantMoeIdParams& p, TensorMap& t) {
  moe::gemv(moe::Stack(p.w, tensor(t, "weights")), nullptr, tensor(t, "a"), listed(p, t), tensor(t, "out"));
}

// The engine's int8 tolerance, for an op whose parameters P give the expert shape and whose `sites`
// (the same function its kernel takes them from) give the pairs and the activation rows they read.
template <class P> ToleranceFn int8_tolerance(moe::Sites (*sites)(const P&, const TensorMap&), bool silu) {
  return [sites, silu](const Problem& pr, const std::string&, const TensorMap& in) {
    const P& p = pr.params.as<P>();
    return moe::gemv_tolerance(p.w, in.at("a"), sites(p, in), silu, pr.dtype);
  };
}

// A GEMV op on the engine, against `weights` or (silu) the fused gate + up + SiLU.
template <class P> void add_gemv(KernelTable& k, const OpRef<P>& op, bool silu) {
  k.add(
      op,
      [silu](const P& p, TensorMap& t) {
        if (silu)
          gate_up_silu(p.w, t, sites(p, t));
        else
          gemv(p.w, t, sites(p, t));
      },
      {}, int8_tolerance<P>(sites<P>, silu));
}

}  // namespace

void add_moe_experts(KernelTable& k) {
  add_gemv(k, ops::gemv_quant_moe_id, false);
  add_gemv(k, ops::gemv_quant_moe_id_offset, false);
  add_gemv(k, ops::gemv_quant_moe_id_batched, false);
  add_gemv(k, ops::gemv_quant_moe_id_gate_up_silu, true);
  add_gemv(k, ops::gemv_quant_moe_id_gate_up_silu_batched, true);
  k.add(ops::gemm_quant_moe_id, gemm, {}, int8_tolerance<GemmQuantMoeIdParams>(listed, false));
  k.add(ops::gemm_quant_moe_id_indirect, gemm, {}, int8_tolerance<GemmQuantMoeIdParams>(listed, false));
}

}  // namespace ts::cpu
