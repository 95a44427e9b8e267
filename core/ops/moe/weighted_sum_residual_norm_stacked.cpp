// weighted_sum_residual_norm_stacked: residual[h] += sum_s weights[s] * slots[s, h] (in-out), then
// normed_out = rms_norm(residual, eps) * next_norm_w: this layer's combine fused with the next layer's
// leading RMS norm. Defined as exactly that chain (tests/moe_fused_test.cpp holds it equal).
#include "core/ops/core/inputs.h"
#include "core/ops/moe/moe_inputs.h"
#include "core/ops/moe_params.h"

namespace ts {
using namespace describe;

namespace {
// normed_out: rms_norm's own bound (ops 10, as core/ops/core/rms_norm.cpp) over the residual a backend
// stored, which may differ from the reference's by one rounding of the case dtype (2 u rel more) and by
// the weighted sum's absolute error; the latter reaches normed_out through x inv_rms x |next_norm_w|,
// inv_rms that of the updated residual (computed here in double from the case's inputs, as the
// reference does) and |next_norm_w| the case's largest.
Tolerance normed_tolerance(const WeightedSumResidualNormParams& p, DType dt, const TensorMap& in) {
  Tolerance t = tol::row_norm(dt, double(p.hidden), 0.0, 10);
  const Tolerance sum = combine_tolerance(dt, p.n_slots + 1, in, true);
  const Tensor &slots = magnitude::input(in, "slots"), &w = magnitude::input(in, "weights"),
               &residual = magnitude::input(in, "residual");
  double squares = 0;
  for (int64_t h = 0; h < p.hidden; ++h) {
    double r = residual.get(h);
    for (int64_t s = 0; s < p.n_slots; ++s) r += w.get(s) * slots.get(s * p.hidden + h);
    squares += r * r;
  }
  const double inv_rms = 1.0 / std::sqrt(squares / double(p.hidden) + double(p.eps));
  const double gain = std::isfinite(inv_rms) ? inv_rms * magnitude::max_abs(in, "next_norm_w") : 0.0;
  t.atol += gain * sum.atol;
  t.rtol += 2 * unit_roundoff(dt);
  t.why = fmt::format("{}; + the residual's error ({}) x inv_rms of the updated residual x max|next_norm_w| = {} "
                      "abs + 2 u_{} rel",
                      t.why, sum.why, magnitude::str(gain), dtype_name(dt));
  return t;
}
}  // namespace

const Op& op_weighted_sum_residual_norm_stacked() {
  using P = WeightedSumResidualNormParams;
  static const TypedOp<P> op({
      .name = "weighted_sum_residual_norm_stacked",
      .family = "moe",
      .summary = "residual += sum_s weights[s] * slots[s, :]; normed_out = rms_norm(residual) * next_norm_w",
      .tensors = [](const P& p) {
        return std::vector{in("slots", {p.n_slots, p.hidden}), pinned(in("weights", {p.n_slots}), DType::F32),
                           inout("residual", {p.hidden}), in("next_norm_w", {p.hidden}),
                           out("normed_out", {p.hidden})};
      },
      .validate_params = [](const P& p) {
        positive(p.n_slots, "n_slots");
        positive(p.hidden, "hidden");
        eps_ok(p.eps);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["slots"], r);
        combine_weights(t["weights"], 1, p.n_slots, r);
        normal(t["residual"], r);
        normal(t["next_norm_w"], r);
      },
      .tolerance = normed_tolerance,
      // The residual as weighted_sum_residual_stacked's.
      .outputs = {{"residual", [](const P& p, DType dt, const TensorMap& in) { return combine_tolerance(dt, p.n_slots + 1, in, true); }, {}}},
      .cost = [](const P& p, DType dt) {
        const double n = double(p.n_slots) * double(p.hidden), h = double(p.hidden);
        return Cost{2.0 * n + 5.0 * h, bytes(dt, n + 4.0 * h) + 4.0 * double(p.n_slots)};
      },
      .cases = stacked_cases<P>(),
      .benches = stacked_benches<P>(),
  });
  return op;
}

}  // namespace ts
