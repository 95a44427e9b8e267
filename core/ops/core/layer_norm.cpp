// layer_norm: out[t, :] = (x[t, :] - mean) / sqrt(var + eps) * gamma + beta (biased variance, per row).
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
LayerNormParams rows(int64_t tokens, int64_t dim, float eps = 1e-5f) { return {{tokens, dim, eps}}; }
}  // namespace

const Op& op_layer_norm() {
  static const TypedOp<LayerNormParams> op({
      .name = "layer_norm",
      .family = "core",
      .summary = "out = (x - mean) / sqrt(var + eps) * gamma + beta, per row (biased variance)",
      .tensors = [](const LayerNormParams& p) {
        return std::vector{in("x", {p.tokens, p.dim}), in("gamma", {p.dim}), in("beta", {p.dim}),
                           out("out", {p.tokens, p.dim})};
      },
      .validate_params = [](const LayerNormParams& p) {
        positive(p.tokens, "tokens"); positive(p.dim, "dim"); eps_ok(p.eps);
      },
      .generate = [](const LayerNormParams& p, TensorMap& t, Rng& r) {
        scaled_rows(t["x"], p.tokens, p.dim, r);
        normal(t["gamma"], r);
        normal(t["beta"], r);
      },
      // beta is added after the scaling: mag bounds |x_hat * gamma|, the case's largest normalised value
      // (computed here in double, per row) times its largest |gamma|. ops 20: the mean's own sum (8 u32
      // of a sigma, as in tol::accumulation), x - mean, var/n, + eps, 1/sqrt (up to 5.5 ulp), * gamma, + beta.
      .tolerance = [](const LayerNormParams& p, DType dt, const TensorMap& in) {
        const Tensor& x = magnitude::input(in, "x");
        double x_hat = 0;
        for (int64_t t = 0; t < p.tokens; ++t) {
          double sum = 0, squares = 0, most = 0;
          for (int64_t i = 0; i < p.dim; ++i) sum += x.get(t * p.dim + i);
          const double mean = sum / double(p.dim);
          for (int64_t i = 0; i < p.dim; ++i) {
            const double d = x.get(t * p.dim + i) - mean;
            squares += d * d;
            most = std::max(most, std::fabs(d));
          }
          const double row = most / std::sqrt(squares / double(p.dim) + double(p.eps));
          if (std::isfinite(row)) x_hat = std::max(x_hat, row);
        }
        const double gamma = magnitude::max_abs(in, "gamma");
        Tolerance tl = tol::row_norm(dt, double(p.dim), x_hat * gamma, 20);
        tl.why += fmt::format(" (max|x_hat| {} x max|gamma| {})", magnitude::str(x_hat), magnitude::str(gamma));
        return tl;
      },
      .cost = [](const LayerNormParams& p, DType dt) {
        const double n = double(p.tokens) * double(p.dim);
        return Cost{7.0 * n, bytes(dt, 2.0 * n + 2.0 * double(p.dim))};
      },
      // Rows cycle through scales 1, 1e4, 1e-3 (inputs.h): every case with 2+ tokens has a large row.
      .cases = {
          {"t1_d1", Tier::Smoke, rows(1, 1)},
          {"t3_d7", Tier::Smoke, rows(3, 7)},
          {"t2_d33", Tier::Ci, rows(2, 33, 1e-6f)},
          {"t3_d257_large", Tier::Ci, rows(3, 257)},
          {"t5_d1000", Tier::Ci, rows(5, 1000)},
          {"t3_d4097", Tier::Ci, rows(3, 4097)},
          {"bert_large_t8_d1024", Tier::Ci, rows(8, 1024, 1e-12f)},
          {"whisper_large_t30_d1280", Tier::Full, rows(30, 1280)},
      },
      .benches = {
          {"t4096_d1024", Tier::Full, rows(4096, 1024, 1e-12f)},  // BERT-large rows, 32 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
