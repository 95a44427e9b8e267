// gemv_quant_moe_id: out[i, :] = a[i * src1_stride ..][:n_cols] @ dequant(weights[ids[i]])^T for i <
// n_selected; src1_stride 0 broadcasts one activation row (gate / up), n_cols or more gives each pair
// its own (down). `a` is a flat buffer of a_len elements (inferred).
#include "core/ops/describe.h"
#include "core/ops/moe/expert_gemv_def.h"

namespace ts {
using namespace describe;

namespace {

using P = GemvQuantMoeIdParams;

P gemv(QuantKind kind, int64_t experts, int64_t n_rows, int64_t n_cols, int64_t n_selected, int64_t stride) {
  return {{kind, experts, n_rows, n_cols}, n_selected, stride,
          moe_experts::a_length((n_selected - 1) * stride, n_cols)};
}

std::vector<Preset<P>> cases() {
  using enum QuantKind;
  return {
      {"Q4_0_e8_r5_k160_sel2_bcast", Tier::Smoke, gemv(Q4_0, 8, 5, 160, 2, 0)},
      {"Q8_0_e8_r9_k96_sel16_stride96", Tier::Ci, gemv(Q8_0, 8, 9, 96, 16, 96)},  // 16 pairs on 8 experts
      {"Q4_K_e64_r3_k256_sel6_stride300", Tier::Ci, gemv(Q4_K, 64, 3, 256, 6, 300)},
      {"Q6_K_e128_r2_k256_sel8_bcast", Tier::Ci, gemv(Q6_K, 128, 2, 256, 8, 0), {DType::F32}},
      {"F32_e8_r7_k40_sel3_stride45", Tier::Ci, gemv(F32, 8, 7, 40, 3, 45), {DType::F32}},
      {"F16_e8_r7_k40_sel12_bcast", Tier::Ci, gemv(F16, 8, 7, 40, 12, 0), {DType::F16}},
      {"BF16_e64_r4_k33_sel6_stride33", Tier::Ci, gemv(BF16, 64, 4, 33, 6, 33), {DType::BF16}},
  };
}

// Decode, one token: each model's gate projection (n_rows = ffn, n_cols = hidden, one row broadcast).
std::vector<Preset<P>> benches() {
  std::vector<Preset<P>> v;
  for (const auto& [m, k] : moe_experts::bench_models())
    v.push_back({moe_experts::bench_name(m, k, "b1"), Tier::Full, gemv(k, m.experts, m.ffn, m.hidden, m.top_k, 0),
                 moe_experts::bench_dtypes(k)});
  return v;
}

}  // namespace

const Op& op_gemv_quant_moe_id() {
  static const TypedOp<P> op(moe_experts::gemv_def<P>({
      .name = "gemv_quant_moe_id",
      .summary = "out[i,:] = a[i*src1_stride ..] @ dequant(weights[ids[i]])^T, i < n_selected",
      .check_fields = [](const P& p) {
        positive(p.n_selected, "n_selected");
        moe_experts::check_stride(p.src1_stride, p.w.n_cols, "src1_stride");
      },
      .cases = cases(),
      .benches = benches(),
  }));
  return op;
}

}  // namespace ts
