// silu: out = x * sigmoid(x) = x / (1 + exp(-x)), elementwise.
#include "core/ops/core/inputs.h"
#include "core/ops/describe.h"
#include "core/ops/tensor_params.h"

namespace ts {
using namespace describe;

namespace {
SiluParams len(int64_t n) { return {n}; }
}  // namespace

const Op& op_silu() {
  static const TypedOp<SiluParams> op({
      .name = "silu",
      .family = "tensor",
      .summary = "out = x / (1 + exp(-x))",
      .tensors = [](const SiluParams& p) { return std::vector{in("x", {p.len}), out("out", {p.len})}; },
      .validate_params = [](const SiluParams& p) { positive(p.len, "len"); },
      // N(0, 4): both tails reach |x| = 16, where 1 + exp(-x) is exp(-x) or 1 and a careless exp shows.
      .generate = [](const SiluParams&, TensorMap& t, Rng& r) { normal(t["x"], r, 4.0); },
      // exp (3 ulp at OpenCL's bound; vulkan/shaders/math.glsl's exp holds that too), the add, the
      // division: silu_mul_stacked's 20 F32 ops, relative to each output, plus the underflow floor.
      .tolerance = [](const SiluParams&, DType dt, const TensorMap&) { return tol::elementwise(dt, 20); },
      // FLOPs: negate, exp (one), add, divide.
      .cost = [](const SiluParams& p, DType dt) { return Cost{4.0 * p.len, bytes(dt, 2.0 * p.len)}; },
      .cases = edge_lengths<SiluParams>({
          {"llama3_8b_t4_ff14336", Tier::Full, len(4 * 14336)},
      }),
      .benches = {
          {"llama3_8b_t512_ff14336", Tier::Full, len(512 * 14336)},  // 58 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
