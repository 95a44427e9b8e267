// gemv_quant_moe_id_offset: gemv_quant_moe_id reading a from a_offset and ids from ids_offset (one
// token's block of a stacked [m, top_k] ids buffer, its row of a batch's activations), out from 0.
// `a` and `ids` are flat buffers of a_len and ids_len elements (inferred).
#include "core/ops/describe.h"
#include "core/ops/moe/expert_gemv_def.h"

namespace ts {
using namespace describe;

namespace {

using P = GemvQuantMoeIdOffsetParams;

// a_offset and ids_offset land `rows_after` rows / id blocks before the buffers' ends, so a read past
// the window lands on data, not on the guard.
P gemv(QuantKind kind, int64_t experts, int64_t n_rows, int64_t n_cols, int64_t n_selected, int64_t stride,
       int64_t a_offset, int64_t ids_offset, int64_t tail) {
  return {{kind, experts, n_rows, n_cols}, a_offset, ids_offset, n_selected, stride,
          moe_experts::a_length(a_offset + (n_selected - 1) * stride, n_cols) + tail, ids_offset + n_selected + tail};
}

std::vector<Preset<P>> cases() {
  using enum QuantKind;
  return {
      {"Q4_0_e8_r5_k64_sel2_a64_ids4", Tier::Smoke, gemv(Q4_0, 8, 5, 64, 2, 0, 64, 4, 3)},
      {"Q4_K_e64_r3_k256_sel6_stride256_a512_ids12", Tier::Ci, gemv(Q4_K, 64, 3, 256, 6, 256, 512, 12, 7)},
      {"Q8_0_e128_r2_k32_sel8_a35_ids40_to_end", Tier::Ci, gemv(Q8_0, 128, 2, 32, 8, 0, 35, 40, 0), {DType::F32}},
      {"F16_e8_r6_k24_sel16_stride30_a7_ids1", Tier::Ci, gemv(F16, 8, 6, 24, 16, 30, 7, 1, 2), {DType::F16}},
  };
}

// Decode of one item of a batched step: its activation row and ids block sit inside the batch's buffers.
std::vector<Preset<P>> benches() {
  std::vector<Preset<P>> v;
  for (const auto& [m, k] : moe_experts::bench_models())
    v.push_back({moe_experts::bench_name(m, k, "b1"), Tier::Full,
                 gemv(k, m.experts, m.ffn, m.hidden, m.top_k, 0, 3 * m.hidden, 3 * m.top_k, 4 * m.top_k),
                 moe_experts::bench_dtypes(k)});
  return v;
}

}  // namespace

const Op& op_gemv_quant_moe_id_offset() {
  static const TypedOp<P> op(moe_experts::gemv_def<P>({
      .name = "gemv_quant_moe_id_offset",
      .summary = "gemv_quant_moe_id with a read from a_offset and ids from ids_offset",
      .check_fields = [](const P& p) {
        positive(p.n_selected, "n_selected");
        non_negative(p.a_offset, "a_offset");
        non_negative(p.ids_offset, "ids_offset");
        moe_experts::check_stride(p.src1_stride, p.w.n_cols, "src1_stride");
      },
      .cases = cases(),
      .benches = benches(),
  }));
  return op;
}

}  // namespace ts
