// gelu: out = 0.5 * x * (1 + erf(x / sqrt(2))), the erf form (PyTorch's default), elementwise.
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
GeluParams len(int64_t n) { return {n}; }
}  // namespace

const Op& op_gelu() {
  static const TypedOp<GeluParams> op({
      .name = "gelu",
      .family = "core",
      .summary = "out = 0.5 * x * (1 + erf(x / sqrt(2)))",
      .tensors = [](const GeluParams& p) { return std::vector{in("x", {p.len}), out("out", {p.len})}; },
      .validate_params = [](const GeluParams& p) { positive(p.len, "len"); },
      .generate = [](const GeluParams&, TensorMap& t, Rng& r) { normal(t["x"], r); },
      .tolerance = [](const GeluParams&, DType dt, const TensorMap& in) {
        // ops 20: erf at OpenCL's bound (16 ulp), x / sqrt(2), 1 +, * x. For x << 0, 1 + erf cancels and
        // erf's error (16 u32 of |erf| <= 1) turns absolute, times |x| / 2, at most the case's
        // max|x| / 2 and never past 3: past |x| = 6 an F32 erf is -1 and both sides are within 1e-8 of 0.
        // Plus the underflow floor of the output dtype.
        Tolerance t = tol::elementwise(dt, 20);
        const double half_x = std::min(magnitude::max_abs(in, "x") / 2, 3.0);
        t.atol = half_x * 16.0 * 0x1p-24 + tol::underflow_floor(dt);
        t.why += fmt::format("; 1+erf cancels for x<0: min(max|x|/2, 3) ({}) x 16 u32 abs", magnitude::str(half_x));
        return t;
      },
      // FLOPs: the formula's 4 ops with erf counted as one.
      .cost = [](const GeluParams& p, DType dt) { return Cost{4.0 * p.len, bytes(dt, 2.0 * p.len)}; },
      .cases = edge_lengths<GeluParams>({
          {"bert_base_t4_ff3072", Tier::Full, len(4 * 3072)},
      }),
      .benches = {
          {"t2048_ff4096", Tier::Full, len(2048 * 4096)},  // 64 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
