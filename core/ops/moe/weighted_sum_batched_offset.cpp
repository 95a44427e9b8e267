// weighted_sum_batched_offset: weighted_sum_batched on windows of larger buffers, the per-item batched
// decode's form: weights F32 (1-D) read from element weights_offset as [batch, top_k], out (in-out,
// 1-D) written from element out_offset as [batch, hidden]; the rest of out keeps its values.
#include "core/ops/moe/moe_inputs.h"
#include "core/ops/moe_params.h"

namespace ts {
using namespace describe;

namespace {
WeightedSumBatchedOffsetParams window(int64_t batch, int64_t top_k, int64_t hidden, int64_t weights_offset,
                                      int64_t out_offset, int64_t weights_len, int64_t out_len) {
  return {batch, top_k, hidden, weights_offset, out_offset, weights_len, out_len};
}
}  // namespace

const Op& op_weighted_sum_batched_offset() {
  using P = WeightedSumBatchedOffsetParams;
  static const TypedOp<P> op({
      .name = "weighted_sum_batched_offset",
      .family = "moe",
      .summary = "out[out_offset + b*hidden ..] = sum_k weights[weights_offset + b*top_k + k] * slots[b, k, :]",
      .tensors = [](const P& p) {
        return std::vector{in("slots", {p.batch, p.top_k, p.hidden}),
                           pinned(in("weights", {p.weights_len}), DType::F32), inout("out", {p.out_len})};
      },
      .validate_params = [](const P& p) {
        positive(p.batch, "batch");
        positive(p.top_k, "top_k");
        positive(p.hidden, "hidden");
        non_negative(p.weights_offset, "weights_offset");
        non_negative(p.out_offset, "out_offset");
        const int64_t w = checked::mul(p.batch, p.top_k, "batch * top_k");
        const int64_t o = checked::mul(p.batch, p.hidden, "batch * hidden");
        check(checked::fits(p.weights_offset, w, p.weights_len),
              "weighted_sum_batched_offset: weights_offset {} + batch * top_k {} runs past the end of weights ({} "
              "elements)",
              p.weights_offset, w, p.weights_len);
        check(checked::fits(p.out_offset, o, p.out_len),
              "weighted_sum_batched_offset: out_offset {} + batch * hidden {} runs past the end of out ({} elements)",
              p.out_offset, o, p.out_len);
      },
      .infer = [](P& p, const TensorMap& t) {
        p.weights_len = dim_of(t, "weights", 1, 0);
        p.out_len = dim_of(t, "out", 1, 0);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["slots"], r);
        // Every row of top_k in the buffer, the window's and the others', is a router's row.
        Tensor& w = t["weights"];
        uniform(w, r, 0.05, 1.0);
        combine_weights(w, p.weights_len / p.top_k, p.top_k, r);
        normal(t["out"], r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return combine_tolerance(dt, p.top_k, in); },
      .cost = [](const P& p, DType dt) {
        const double n = double(p.batch) * double(p.top_k) * double(p.hidden);
        return Cost{2.0 * n, bytes(dt, n + double(p.batch) * double(p.hidden)) + 4.0 * double(p.batch * p.top_k)};
      },
      // The window sits inside the buffers, at their start or against their end, at offsets no vector
      // width divides.
      .cases = {
          {"b1_k1_h1_at0", Tier::Smoke, window(1, 1, 1, 0, 0, 1, 1)},
          {"b2_k2_h7_mid", Tier::Smoke, window(2, 2, 7, 3, 5, 10, 30)},
          {"b7_k8_h33_to_end", Tier::Ci, window(7, 8, 33, 8, 66, 64, 7 * 33 + 66)},
          {"b3_k6_h257_mid", Tier::Ci, window(3, 6, 257, 13, 257 + 1, 48, 6 * 257)},
          {"b5_k2_h1000_at0", Tier::Ci, window(5, 2, 1000, 0, 0, 30, 8000)},
          {"qwen3_30b_a3b_b4_of16_h2048", Tier::Ci, window(4, 8, 2048, 8 * 8, 8 * 2048, 16 * 8, 16 * 2048)},
      },
      // One item's tokens of a 64-token batch.
      .benches = {
          {"mixtral_8x7b_b16_of64", Tier::Full, window(16, 2, 4096, 32 * 2, 32 * 4096, 64 * 2, 64 * 4096)},
          {"qwen3_30b_a3b_b16_of64", Tier::Full, window(16, 8, 2048, 32 * 8, 32 * 2048, 64 * 8, 64 * 2048)},
          {"deepseek_v2_lite_b16_of64", Tier::Full, window(16, 6, 2048, 32 * 6, 32 * 2048, 64 * 6, 64 * 2048)},
      },
  });
  return op;
}

}  // namespace ts
