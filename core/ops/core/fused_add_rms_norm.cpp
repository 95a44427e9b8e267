// fused_add_rms_norm: residual += x (in place); out = rms_norm(residual) * w, over rows of [tokens, dim].
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
FusedAddRmsNormParams rows(int64_t tokens, int64_t dim, float eps = 1e-6f) { return {{tokens, dim, eps}}; }
}  // namespace

const Op& op_fused_add_rms_norm() {
  static const TypedOp<FusedAddRmsNormParams> op({
      .name = "fused_add_rms_norm",
      .family = "core",
      .summary = "residual += x; out = residual / sqrt(mean(residual^2) + eps) * w",
      .tensors = [](const FusedAddRmsNormParams& p) {
        return std::vector{inout("residual", {p.tokens, p.dim}), in("x", {p.tokens, p.dim}), in("w", {p.dim}),
                           out("out", {p.tokens, p.dim})};
      },
      .validate_params = [](const FusedAddRmsNormParams& p) {
        positive(p.tokens, "tokens"); positive(p.dim, "dim"); eps_ok(p.eps);
      },
      .generate = [](const FusedAddRmsNormParams& p, TensorMap& t, Rng& r) {
        scaled_rows(t["residual"], p.tokens, p.dim, r);
        scaled_rows(t["x"], p.tokens, p.dim, r);
        normal(t["w"], r);
      },
      // As rms_norm plus the add (ops 11). The stored residual is one correctly rounded add: well inside.
      .tolerance = [](const FusedAddRmsNormParams& p, DType dt, const TensorMap&) {
        return tol::row_norm(dt, double(p.dim), 0.0, 11);
      },
      .cost = [](const FusedAddRmsNormParams& p, DType dt) {
        const double n = double(p.tokens) * double(p.dim);
        // residual read and written, x read, out written, w read.
        return Cost{5.0 * n, bytes(dt, 4.0 * n + double(p.dim))};
      },
      // Rows cycle through scales 1, 1e4, 1e-3 (inputs.h): every case with 2+ tokens has a large row.
      .cases = {
          {"t1_d1", Tier::Smoke, rows(1, 1)},
          {"t3_d7", Tier::Smoke, rows(3, 7)},
          {"t2_d33", Tier::Ci, rows(2, 33, 1e-5f)},
          {"t3_d257_large", Tier::Ci, rows(3, 257)},
          {"t7_d1000", Tier::Ci, rows(7, 1000, 1e-5f)},
          {"t2_d4097", Tier::Ci, rows(2, 4097)},
          {"llama3_8b_t4_d4096", Tier::Ci, rows(4, 4096, 1e-5f)},
          {"qwen25_7b_t17_d3584", Tier::Full, rows(17, 3584)},
      },
      .benches = {
          {"t1024_d4096", Tier::Full, rows(1024, 4096, 1e-5f)},  // 64 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
