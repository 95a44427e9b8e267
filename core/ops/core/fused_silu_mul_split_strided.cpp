// fused_silu_mul_split_strided: fused_silu_mul_split on a window of rows: input rows in_row_offset ..
// + tokens of gate_up [in_rows, 2*intermediate] land at rows out_row_offset .. of out [out_rows,
// intermediate]; out's other rows keep their values.
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
FusedSiluMulSplitStridedParams window(int64_t in_row_offset, int64_t out_row_offset, int64_t tokens, int64_t im,
                                      int64_t in_rows, int64_t out_rows) {
  return {in_row_offset, out_row_offset, tokens, im, in_rows, out_rows};
}
}  // namespace

const Op& op_fused_silu_mul_split_strided() {
  static const TypedOp<FusedSiluMulSplitStridedParams> op({
      .name = "fused_silu_mul_split_strided",
      .family = "core",
      .summary = "out[out_row_offset + t] = silu(gate) * up of gate_up[in_row_offset + t], t < tokens",
      .tensors = [](const FusedSiluMulSplitStridedParams& p) {
        return std::vector{in("gate_up", {p.in_rows, checked::mul(2, p.intermediate, "2 intermediate")}), inout("out", {p.out_rows, p.intermediate})};
      },
      .validate_params = [](const FusedSiluMulSplitStridedParams& p) {
        non_negative(p.in_row_offset, "in_row_offset");
        non_negative(p.out_row_offset, "out_row_offset");
        positive(p.tokens, "tokens");
        positive(p.intermediate, "intermediate");
        check(checked::fits(p.in_row_offset, p.tokens, p.in_rows),
              "fused_silu_mul_split_strided: in_row_offset {} + tokens {} runs past gate_up's {} rows", p.in_row_offset,
              p.tokens, p.in_rows);
        check(checked::fits(p.out_row_offset, p.tokens, p.out_rows),
              "fused_silu_mul_split_strided: out_row_offset {} + tokens {} runs past out's {} rows", p.out_row_offset,
              p.tokens, p.out_rows);
      },
      .infer = [](FusedSiluMulSplitStridedParams& p, const TensorMap& t) {
        p.in_rows = dim_of(t, "gate_up", 2, 0);
        p.out_rows = dim_of(t, "out", 2, 0);
      },
      // out starts as data, not NaN: rows outside the window must come back unchanged.
      .generate = [](const FusedSiluMulSplitStridedParams&, TensorMap& t, Rng& r) {
        normal(t["gate_up"], r);
        normal(t["out"], r);
      },
      // As fused_silu_mul_split: exp at GLSL's bound, 1 +, divide, * up (ops 20), relative.
      .tolerance = [](const FusedSiluMulSplitStridedParams&, DType dt, const TensorMap&) { return tol::elementwise(dt, 20); },
      .cost = [](const FusedSiluMulSplitStridedParams& p, DType dt) {
        const double n = double(p.tokens) * double(p.intermediate);
        return Cost{5.0 * n, bytes(dt, 3.0 * n)};
      },
      .cases = {
          {"t1_i1", Tier::Smoke, window(0, 0, 1, 1, 1, 1)},
          {"in2_out1_t3_i7", Tier::Smoke, window(2, 1, 3, 7, 6, 5)},
          {"in5_out0_t4_i33_at_in_end", Tier::Ci, window(5, 0, 4, 33, 9, 4)},
          {"in0_out7_t2_i257", Tier::Ci, window(0, 7, 2, 257, 2, 11)},
          {"in3_out3_t17_i1000", Tier::Ci, window(3, 3, 17, 1000, 20, 25)},
          {"in1_out2_t1_i4097", Tier::Ci, window(1, 2, 1, 4097, 3, 3)},
          {"llama3_8b_in8_out8_t4", Tier::Full, window(8, 8, 4, 14336, 16, 16)},
      },
      .benches = {
          // The second half of a 1024-row gate_up into a 512-row out: 88 MB per call in F32.
          {"llama3_8b_in512_t512", Tier::Full, window(512, 0, 512, 14336, 1024, 512)},
      },
  });
  return op;
}

}  // namespace ts
