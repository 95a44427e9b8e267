// gemv_quant_moe_id_gate_up_silu: silu_out[i, :] = silu(a @ dequant(gate_w[ids[i]])^T) *
// (a @ dequant(up_w[ids[i]])^T) for i < n_selected: one activation row a [n_cols] broadcast to every
// selected expert, gate and up of one kind, unrounded in between (exactly the chain gate GEMV, up
// GEMV, silu_mul_stacked, up to the chain's intermediate roundings).
#include "core/ops/describe.h"
#include "core/ops/moe/experts_common.h"
#include "reference/reference.h"

namespace ts {
using namespace describe;

namespace {

using P = GemvQuantMoeIdGateUpSiluParams;

P fused(QuantKind kind, int64_t experts, int64_t n_rows, int64_t n_cols, int64_t n_selected) {
  return {{kind, experts, n_rows, n_cols}, n_selected};
}

std::vector<Preset<P>> cases() {
  using enum QuantKind;
  return {
      {"Q4_K_e8_r5_k256_sel2", Tier::Smoke, fused(Q4_K, 8, 5, 256, 2)},
      {"Q4_0_e128_r3_k64_sel8", Tier::Ci, fused(Q4_0, 128, 3, 64, 8)},
      {"Q8_0_e8_r9_k96_sel16", Tier::Ci, fused(Q8_0, 8, 9, 96, 16)},  // 16 pairs on 8 experts
      {"Q6_K_e64_r2_k512_sel6", Tier::Ci, fused(Q6_K, 64, 2, 512, 6), {DType::F32}},
      {"F32_e8_r7_k40_sel1", Tier::Ci, fused(F32, 8, 7, 40, 1), {DType::F32}},
      {"F16_e64_r4_k24_sel8", Tier::Ci, fused(F16, 64, 4, 24, 8), {DType::F16}},
      {"BF16_e8_r6_k33_sel2", Tier::Ci, fused(BF16, 8, 6, 33, 2), {DType::BF16}},
  };
}

// One decode step: a token's top_k experts, gate and up of ffn rows over the hidden size.
std::vector<Preset<P>> benches() {
  std::vector<Preset<P>> v;
  for (const auto& [m, k] : moe_experts::bench_models())
    v.push_back({moe_experts::bench_name(m, k, "b1"), Tier::Full, fused(k, m.experts, m.ffn, m.hidden, m.top_k),
                 moe_experts::bench_dtypes(k)});
  return v;
}

}  // namespace

const Op& op_gemv_quant_moe_id_gate_up_silu() {
  static const TypedOp<P> op({
      .name = "gemv_quant_moe_id_gate_up_silu",
      .family = "moe",
      .summary = "silu_out[i,:] = silu(a @ dequant(gate_w[ids[i]])^T) * (a @ dequant(up_w[ids[i]])^T)",
      .tensors = [](const P& p) {
        return std::vector{in("a", {p.w.n_cols}), moe_experts::weights("gate_w", p.w), moe_experts::weights("up_w", p.w),
                           pinned(in("ids", {p.n_selected}), DType::I32), out("silu_out", {p.n_selected, p.w.n_rows})};
      },
      .validate_params = [](const P& p) {
        moe_experts::check(p.w);
        positive(p.n_selected, "n_selected");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        moe_experts::check_plain_kind(p.w, t);
        moe_experts::check_expert_ids(t, "ids", 0, p.n_selected, p.w.num_experts);
      },
      .infer = [](P& p, const TensorMap& t) {
        moe_experts::check_weight_bytes(t, "gate_w", p.w);
        moe_experts::check_weight_bytes(t, "up_w", p.w);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        moe_experts::fill_weights(p.w, t["gate_w"], r);
        moe_experts::fill_weights(p.w, t["up_w"], r);
        moe_experts::route_pairs(p.n_selected, p.w.num_experts, t["ids"].as<int32_t>(), r);
      },
      .reference = ref::gemv_quant_moe_id_gate_up_silu,
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return moe_experts::silu_product(dt, p.w, in); },
      .cost = [](const P& p, DType dt) {
        return moe_experts::cost(p.w, dt, 2, moe_experts::routed_experts(p.n_selected, p.w.num_experts), p.n_selected, 1);
      },
      .cases = cases(),
      .benches = benches(),
  });
  return op;
}

}  // namespace ts
