// The moe family's expert GEMV / GEMM ops on the cpu: adapters over the one engine
// (cpu/moe_experts.h). Each only lists, per pair, where its activation row starts, its expert and its
// output row.
#include <vector>

#include "core/ops/moe_params.h"
#include "cpu/common.h"
#include "cpu/kernels.h"
#include "cpu/moe_experts.h"

namespace ts::cpu {
namespace {

using moe::Site;

// Pair i reads a[a_offset + i * stride ..] against expert ids[i] into out row i.
moe::Sites strided(const int32_t* ids, int64_t n, int64_t a_offset, int64_t stride) {
  moe::Sites s;
  s.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s.push_back({a_offset + i * stride, ids[i], i});
  return s;
}

// Pair p of m tokens x top_k slots reads a[(p / top_k) * outer + (p % top_k) * inner ..].
moe::Sites batched(const int32_t* ids, const GemvQuantMoeIdBatchedParams& p) {
  moe::Sites s;
  for (int64_t i = 0; i < p.m * p.top_k; ++i)
    s.push_back({(i / p.top_k) * p.src1_outer_stride + (i % p.top_k) * p.src1_inner_stride, ids[i], i});
  return s;
}

// The pairs each expert lists, ids[e, i] for i < tpe[e] only (the slots past tpe[e] are stale and never
// read); pair t * top_k + s reads a's row t (ne11 1) or row t * top_k + s (ne11 top_k).
moe::Sites listed(const GemmQuantMoeIdParams& p, const TensorMap& t) {
  const int32_t* ids = t.at("ids").as<int32_t>();
  const int32_t* tpe = t.at("tpe").as<int32_t>();
  moe::Sites s;
  for (int64_t e = 0; e < p.w.num_experts; ++e)
    for (int64_t i = 0; i < tpe[e]; ++i) {
      const int64_t pair = ids[e * p.max_per_expert + i];
      s.push_back({(p.ne11 == 1 ? pair / p.top_k : pair) * p.w.n_cols, e, pair});
    }
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

template <class P> moe::Sites strided_sites(const P& p, const TensorMap& in) {
  return strided(in.at("ids").as<int32_t>(), p.n_selected, 0, p.src1_stride);
}
moe::Sites offset_sites(const GemvQuantMoeIdOffsetParams& p, const TensorMap& in) {
  return strided(in.at("ids").as<int32_t>() + p.ids_offset, p.n_selected, p.a_offset, p.src1_stride);
}
moe::Sites gate_up_sites(const GemvQuantMoeIdGateUpSiluParams& p, const TensorMap& in) {
  return strided(in.at("ids").as<int32_t>(), p.n_selected, 0, 0);
}
moe::Sites batched_sites(const GemvQuantMoeIdBatchedParams& p, const TensorMap& in) {
  return batched(in.at("ids").as<int32_t>(), p);
}

}  // namespace

void add_moe_experts(KernelTable& k) {
  k.add(
      ops::gemv_quant_moe_id,
      [](const GemvQuantMoeIdParams& p, TensorMap& t) {
        gemv(p.w, t, strided_sites(p, t));
      },
      {}, int8_tolerance<GemvQuantMoeIdParams>(strided_sites<GemvQuantMoeIdParams>, false));
  k.add(
      ops::gemv_quant_moe_id_offset,
      [](const GemvQuantMoeIdOffsetParams& p, TensorMap& t) {
        gemv(p.w, t, offset_sites(p, t));
      },
      {}, int8_tolerance<GemvQuantMoeIdOffsetParams>(offset_sites, false));
  k.add(
      ops::gemv_quant_moe_id_batched,
      [](const GemvQuantMoeIdBatchedParams& p, TensorMap& t) {
        gemv(p.w, t, batched_sites(p, t));
      },
      {}, int8_tolerance<GemvQuantMoeIdBatchedParams>(batched_sites, false));
  k.add(
      ops::gemv_quant_moe_id_gate_up_silu,
      [](const GemvQuantMoeIdGateUpSiluParams& p, TensorMap& t) {
        gate_up_silu(p.w, t, gate_up_sites(p, t));
      },
      {}, int8_tolerance<GemvQuantMoeIdGateUpSiluParams>(gate_up_sites, true));
  k.add(
      ops::gemv_quant_moe_id_gate_up_silu_batched,
      [](const GemvQuantMoeIdBatchedParams& p, TensorMap& t) {
        gate_up_silu(p.w, t, batched_sites(p, t));
      },
      {}, int8_tolerance<GemvQuantMoeIdBatchedParams>(batched_sites, true));
  k.add(ops::gemm_quant_moe_id, gemm, {}, int8_tolerance<GemmQuantMoeIdParams>(listed, false));
  k.add(ops::gemm_quant_moe_id_indirect, gemm, {}, int8_tolerance<GemmQuantMoeIdParams>(listed, false));
}

}  // namespace ts::cpu
