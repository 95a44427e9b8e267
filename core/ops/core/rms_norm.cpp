// rms_norm: out[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * w, over rows of [tokens, dim].
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
RmsNormParams rows(int64_t tokens, int64_t dim, float eps = 1e-6f) { return {tokens, dim, eps}; }
}  // namespace

const Op& op_rms_norm() {
  static const TypedOp<RmsNormParams> op({
      .name = "rms_norm",
      .family = "core",
      .summary = "out = x / sqrt(mean(x^2) + eps) * w, per row of [tokens, dim]",
      .tensors = [](const RmsNormParams& p) {
        return std::vector{in("x", {p.tokens, p.dim}), in("w", {p.dim}), out("out", {p.tokens, p.dim})};
      },
      .validate_params = [](const RmsNormParams& p) {
        positive(p.tokens, "tokens"); positive(p.dim, "dim"); eps_ok(p.eps);
      },
      .generate = [](const RmsNormParams& p, TensorMap& t, Rng& r) {
        scaled_rows(t["x"], p.tokens, p.dim, r);
        normal(t["w"], r);
      },
      // ops 10: ss/n (2.5 ulp, OpenCL's divide), + eps, 1/sqrt (up to 5.5 ulp), * x, * w. Nothing is
      // added after the scaling, so the error stays relative to each output (mag 0).
      .tolerance = [](const RmsNormParams& p, DType dt, const TensorMap&) { return tol::row_norm(dt, double(p.dim), 0.0, 10); },
      .cost = [](const RmsNormParams& p, DType dt) {
        const double n = double(p.tokens) * double(p.dim);
        return Cost{4.0 * n, bytes(dt, 2.0 * n + double(p.dim))};
      },
      // Rows cycle through scales 1, 1e4, 1e-3 (inputs.h): every case with 2+ tokens has a large row.
      .cases = {
          {"t1_d1", Tier::Smoke, rows(1, 1)},
          {"t3_d7", Tier::Smoke, rows(3, 7)},
          {"t2_d33", Tier::Ci, rows(2, 33, 1e-5f)},
          {"t3_d257_large", Tier::Ci, rows(3, 257)},
          {"t5_d1000", Tier::Ci, rows(5, 1000, 1e-5f)},
          {"t3_d4097", Tier::Ci, rows(3, 4097)},
          {"qwen3_qk_t64_d128", Tier::Ci, rows(64, 128)},
          {"llama3_8b_t4_d4096", Tier::Ci, rows(4, 4096, 1e-5f)},
          {"qwen25_7b_t17_d3584", Tier::Full, rows(17, 3584)},
      },
      .benches = {
          {"t512_d4096", Tier::Full, rows(512, 4096, 1e-5f)},
          {"t2048_d4096", Tier::Full, rows(2048, 4096, 1e-5f)},  // 64 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
