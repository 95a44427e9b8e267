// fused_silu_mul_split: out[t, j] = silu(gate_up[t, j]) * gate_up[t, im + j]: gate is the first im columns.
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
FusedSiluMulSplitParams shape(int64_t tokens, int64_t im) { return {tokens, im}; }
}  // namespace

const Op& op_fused_silu_mul_split() {
  static const TypedOp<FusedSiluMulSplitParams> op({
      .name = "fused_silu_mul_split",
      .family = "core",
      .summary = "out = silu(gate) * up, gate_up = [gate | up] of [tokens, 2*im]",
      .tensors = [](const FusedSiluMulSplitParams& p) {
        return std::vector{in("gate_up", {p.tokens, checked::mul(2, p.im, "2 im")}), out("out", {p.tokens, p.im})};
      },
      .validate_params = [](const FusedSiluMulSplitParams& p) { positive(p.tokens, "tokens"); positive(p.im, "im"); },
      .generate = [](const FusedSiluMulSplitParams&, TensorMap& t, Rng& r) { normal(t["gate_up"], r); },
      // ops 20: exp at GLSL's bound (3 + 2|x| ulp, |x| <= 6.5 for N(0,1)), 1 +, divide (2.5 ulp), * up;
      // no cancellation (1 + exp(-g) >= 1), so the error stays relative.
      .tolerance = [](const FusedSiluMulSplitParams&, DType dt, const TensorMap&) { return tol::elementwise(dt, 20); },
      .cost = [](const FusedSiluMulSplitParams& p, DType dt) {
        const double n = double(p.tokens) * double(p.im);
        return Cost{5.0 * n, bytes(dt, 3.0 * n)};
      },
      .cases = {
          {"t1_im1", Tier::Smoke, shape(1, 1)},
          {"t3_im7", Tier::Smoke, shape(3, 7)},
          {"t5_im33", Tier::Ci, shape(5, 33)},
          {"t2_im257", Tier::Ci, shape(2, 257)},
          {"t7_im1000", Tier::Ci, shape(7, 1000)},
          {"t1_im4097", Tier::Ci, shape(1, 4097)},
          {"llama3_8b_t4_im14336", Tier::Full, shape(4, 14336)},
          {"qwen3_8b_t4_im12288", Tier::Full, shape(4, 12288)},
      },
      .benches = {
          {"llama3_8b_t512_im14336", Tier::Full, shape(512, 14336)},  // 88 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
