// silu_mul_stacked and silu_mul_batched: out[s, i] = silu(gate[s, i]) * up[s, i] over rows of
// [rows, ffn]: the decode form (n_slots = top_k expert outputs of one token) and the prefill form
// (total_pairs = batch * top_k). One description, two row-count parameters.
#include "core/ops/moe_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {

// The op over parameter struct P, whose row count is the field `rows` names (`rows_name` in errors).
template <class P>
OpDef<P> silu_mul_def(std::string name, int64_t P::*rows, const char* rows_name, std::vector<Preset<P>> cases,
                      std::vector<Preset<P>> benches) {
  return {
      .name = std::move(name),
      .family = "moe",
      .summary = fmt::format("out = silu(gate) * up over [{}, ffn]", rows_name),
      .tensors = [rows](const P& p) {
        const Shape s{p.*rows, p.ffn};
        return std::vector{in("gate", s), in("up", s), out("out", s)};
      },
      .validate_params = [rows, rows_name](const P& p) { positive(p.*rows, rows_name); positive(p.ffn, "ffn"); },
      .generate = [](const P&, TensorMap& t, Rng& r) { normal(t["gate"], r); normal(t["up"], r); },
      // As fused_silu_mul_split: exp (3 + 2|x| ulp, |x| <= 6.5 for N(0,1)), 1 +, divide, * up; no
      // cancellation (1 + exp(-g) >= 1), so the error stays relative.
      .tolerance = [](const P&, DType dt, const TensorMap&) { return tol::elementwise(dt, 20); },
      .cost = [rows](const P& p, DType dt) {
        const double n = double(p.*rows) * double(p.ffn);
        return Cost{5.0 * n, bytes(dt, 3.0 * n)};
      },
      .cases = std::move(cases),
      .benches = std::move(benches),
  };
}

}  // namespace

// Expert intermediate sizes: Mixtral 8x7B 14336, Qwen3-30B-A3B 768, DeepSeek-V2-Lite 1408.
const Op& op_silu_mul_stacked() {
  using P = SiluMulStackedParams;
  static const TypedOp<P> op(silu_mul_def<P>(
      "silu_mul_stacked", &P::n_slots, "n_slots",
      {
          {"s1_f1", Tier::Smoke, {1, 1}},
          {"s2_f7", Tier::Smoke, {2, 7}},
          {"s8_f33", Tier::Ci, {8, 33}},
          {"s6_f1000", Tier::Ci, {6, 1000}},
          {"qwen3_30b_a3b_s8_f768", Tier::Ci, {8, 768}},
          {"deepseek_v2_lite_s6_f1408", Tier::Ci, {6, 1408}},
          {"mixtral_8x7b_s2_f14336", Tier::Full, {2, 14336}},
      },
      {
          {"mixtral_8x7b_b1", Tier::Full, {2, 14336}},
          {"qwen3_30b_a3b_b1", Tier::Full, {8, 768}},
          {"deepseek_v2_lite_b1", Tier::Full, {6, 1408}},
      }));
  return op;
}

const Op& op_silu_mul_batched() {
  using P = SiluMulBatchedParams;
  static const TypedOp<P> op(silu_mul_def<P>(
      "silu_mul_batched", &P::total_pairs, "total_pairs",
      {
          {"p1_f1", Tier::Smoke, {1, 1}},
          {"p14_f7", Tier::Smoke, {14, 7}},
          {"p33_f257", Tier::Ci, {33, 257}},
          {"p264_f33", Tier::Ci, {264, 33}},  // 33 tokens x top 8
          {"qwen3_30b_a3b_p56_f768", Tier::Ci, {56, 768}},
          {"deepseek_v2_lite_p42_f1408", Tier::Ci, {42, 1408}},
      },
      {
          {"mixtral_8x7b_b16", Tier::Full, {32, 14336}},
          {"mixtral_8x7b_b512", Tier::Full, {1024, 14336}},
          {"qwen3_30b_a3b_b16", Tier::Full, {128, 768}},
          {"qwen3_30b_a3b_b512", Tier::Full, {4096, 768}},
          {"deepseek_v2_lite_b16", Tier::Full, {96, 1408}},
          {"deepseek_v2_lite_b512", Tier::Full, {3072, 1408}},
      }));
  return op;
}

}  // namespace ts
