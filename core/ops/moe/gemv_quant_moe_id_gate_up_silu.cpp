// gemv_quant_moe_id_gate_up_silu: silu_out[i, :] = silu(a @ dequant(gate_w[ids[i]])^T) *
// (a @ dequant(up_w[ids[i]])^T) for i < n_selected: one activation row a [n_cols] broadcast to every
// selected expert, gate and up of one kind, unrounded in between (exactly the chain gate GEMV, up
// GEMV, silu_mul_stacked, up to the chain's intermediate roundings).
#include "core/ops/describe.h"
#include "core/ops/moe/expert_gemv_def.h"

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
  static const TypedOp<P> op(moe_experts::gemv_def<P>({
      .name = "gemv_quant_moe_id_gate_up_silu",
      .summary = "silu_out[i,:] = silu(a @ dequant(gate_w[ids[i]])^T) * (a @ dequant(up_w[ids[i]])^T)",
      .silu = true,
      .check_fields = [](const P& p) { positive(p.n_selected, "n_selected"); },
      .cases = cases(),
      .benches = benches(),
  }));
  return op;
}

}  // namespace ts
