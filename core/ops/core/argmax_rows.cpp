// argmax_rows: ids[r] = the first index of the maximum of logits[r, :] (greedy sampling).
#include <algorithm>

#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
ArgmaxRowsParams shape(int64_t m, int64_t n) { return {m, n}; }

// Rows cycle through three kinds. Row 0, 3, ...: integers in [-2, 2], so the maximum repeats and the
// first index must win. Row 1, 4, ...: N(0, 1e4), logits of magnitude 1e4 (clamped to F16's range;
// F16 and BF16 round them into ties of their own). Row 2, 5, ...: N(0, 1).
void logits(Tensor& x, int64_t m, int64_t n, Rng& r) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = 0; c < n; ++c) {
      double v;
      switch (i % 3) {
        case 0: v = double(r.below(5)) - 2.0; break;
        case 1: v = std::clamp(1e4 * r.normal(), -6e4, 6e4); break;
        default: v = r.normal();
      }
      x.set(i * n + c, v);
    }
}
}  // namespace

const Op& op_argmax_rows() {
  static const TypedOp<ArgmaxRowsParams> op({
      .name = "argmax_rows",
      .family = "core",
      .summary = "ids[r] = first index of max(logits[r, :])",
      .tensors = [](const ArgmaxRowsParams& p) {
        return std::vector{in("logits", {p.m, p.n}), pinned(out("ids", {p.m}), DType::U32)};
      },
      .validate_params = [](const ArgmaxRowsParams& p) {
        positive(p.m, "m");
        positive(p.n, "n");
        check(p.n <= int64_t{1} << 32, "argmax_rows: n = {} does not fit a U32 index", p.n);
      },
      .generate = [](const ArgmaxRowsParams& p, TensorMap& t, Rng& r) { logits(t["logits"], p.m, p.n, r); },
      // An index: any other answer is wrong, whatever the logits' dtype.
      .tolerance = [](const ArgmaxRowsParams&, DType, const TensorMap&) { return Tolerance{0, 0, "an index: exact"}; },
      .cost = [](const ArgmaxRowsParams& p, DType dt) {
        return Cost{double(p.m) * double(p.n), bytes(dt, double(p.m) * double(p.n)) + 4.0 * double(p.m)};
      },
      .cases = {
          {"m1_n1", Tier::Smoke, shape(1, 1)},
          {"m3_n7", Tier::Smoke, shape(3, 7)},
          {"m3_n33", Tier::Ci, shape(3, 33)},
          {"m5_n257", Tier::Ci, shape(5, 257)},
          {"m6_n1000", Tier::Ci, shape(6, 1000)},
          {"m3_n4097", Tier::Ci, shape(3, 4097)},
          {"llama2_vocab_m4_n32000", Tier::Ci, shape(4, 32000)},
          {"llama3_vocab_m3_n128256", Tier::Full, shape(3, 128256)},
          {"qwen3_vocab_m2_n151936", Tier::Full, shape(2, 151936)},
      },
      .benches = {
          {"llama3_vocab_m64_n128256", Tier::Full, shape(64, 128256)},  // 33 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
