// scaled_add_inplace: dst[i] += scale * src[i].
#include <cmath>

#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
ScaledAddInplaceParams len(int64_t n, float scale) { return {n, scale}; }
}  // namespace

const Op& op_scaled_add_inplace() {
  static const TypedOp<ScaledAddInplaceParams> op({
      .name = "scaled_add_inplace",
      .family = "core",
      .summary = "dst[i] += scale * src[i]",
      .tensors = [](const ScaledAddInplaceParams& p) { return std::vector{inout("dst", {p.len}), in("src", {p.len})}; },
      .validate_params = [](const ScaledAddInplaceParams& p) { positive(p.len, "len"); },
      .generate = [](const ScaledAddInplaceParams&, TensorMap& t, Rng& r) { normal(t["dst"], r); normal(t["src"], r); },
      .tolerance = [](const ScaledAddInplaceParams& p, DType dt, const TensorMap& in) {
        // A product and an add in F32. Where dst ~ -scale*src the sum cancels and the product's rounding
        // (u32 of |scale * src|, |src| at most the case's max|src|) is absolute.
        Tolerance t = tol::elementwise(dt, 2);
        const double src = magnitude::max_abs(in, "src");
        t.atol = src * std::fabs(double(p.scale)) * 0x1p-24 + tol::underflow_floor(dt);
        t.why += fmt::format("; cancellation: u32*|scale|*max|src| ({}) abs", magnitude::str(src));
        return t;
      },
      .cost = [](const ScaledAddInplaceParams& p, DType dt) { return Cost{2.0 * p.len, bytes(dt, 3.0 * p.len)}; },
      .cases = {
          {"len1", Tier::Smoke, len(1, 0.5f)},
          {"len7", Tier::Smoke, len(7, -1.0f)},
          {"len17_scale0", Tier::Ci, len(17, 0.0f)},
          {"len33", Tier::Ci, len(33, 0.125f)},
          {"len257", Tier::Ci, len(257, 3.7f)},
          {"len1000", Tier::Ci, len(1000, -0.3f)},
          {"len4097", Tier::Ci, len(4097, 1.0f)},
          {"moe_combine_d4096", Tier::Full, len(4096, 0.27f)},
      },
      .benches = {
          {"t2048_d4096", Tier::Full, len(2048 * 4096, 0.5f)},  // 96 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
