// weighted_sum_stacked: out[h] = sum_s weights[s] * slots[s, h], the decode-step combine of one
// token's n_slots expert outputs. slots [n_slots, hidden], weights F32 [n_slots] -> out [hidden].
#include "core/ops/moe/moe_inputs.h"
#include "core/ops/moe_params.h"

namespace ts {
using namespace describe;

const Op& op_weighted_sum_stacked() {
  using P = WeightedSumStackedParams;
  static const TypedOp<P> op({
      .name = "weighted_sum_stacked",
      .family = "moe",
      .summary = "out = sum_s weights[s] * slots[s, :]",
      .tensors = [](const P& p) {
        return std::vector{in("slots", {p.n_slots, p.hidden}), pinned(in("weights", {p.n_slots}), DType::F32),
                           out("out", {p.hidden})};
      },
      .validate_params = [](const P& p) { positive(p.n_slots, "n_slots"); positive(p.hidden, "hidden"); },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["slots"], r);
        combine_weights(t["weights"], 1, p.n_slots, r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return combine_tolerance(dt, p.n_slots, in); },
      .cost = [](const P& p, DType dt) {
        const double n = double(p.n_slots) * double(p.hidden);
        return Cost{2.0 * n, bytes(dt, n + double(p.hidden)) + 4.0 * double(p.n_slots)};
      },
      .cases = stacked_cases<P>(),
      .benches = stacked_benches<P>(),
  });
  return op;
}

}  // namespace ts
