// apply_rope_positions, apply_rope_partial: rotate-half RoPE of x [seq, heads, head_dim] with each
// token's angles computed from its position (positions U32 [seq]) and `base`, over all of head_dim or
// over the first rotary_dim channels (the rest copied: Phi's partial rotary). One description serves
// both; core/ops/tensor/rope_angle.h says how a device keeps the angle exact at large positions.
#include <cmath>

#include "core/ops/describe.h"
#include "core/ops/tensor/rope_angle.h"
#include "core/ops/tensor_params.h"

namespace ts {
using namespace describe;

namespace {

// Position 2^24 - 1 first (the largest a case may hold), 0 second, then alternately anywhere below
// 2^24 and below 8192 (a context's usual positions): angles of every size, every turn of the circle.
void positions(Tensor& pos, Rng& r) {
  uint32_t* v = pos.as<uint32_t>();
  for (int64_t i = 0; i < pos.numel(); ++i)
    v[i] = static_cast<uint32_t>(i == 0   ? rope_angle::kMaxPosition - 1
                                 : i == 1 ? 0
                                          : r.below(i % 2 ? 8192 : rope_angle::kMaxPosition));
}

template <class P> OpDef<P> rope_def(bool partial, std::vector<Preset<P>> cases, std::vector<Preset<P>> benches) {
  return {
      .name = partial ? "apply_rope_partial" : "apply_rope_positions",
      .family = "tensor",
      .summary = partial
                     ? "x [seq,heads,hd], positions U32 [seq] -> out: rotate-half RoPE of the first rotary_dim channels"
                     : "x [seq,heads,hd], positions U32 [seq] -> out: rotate-half RoPE, angle pos * base^(-2i/hd)",
      .tensors = [](const P& p) {
        return std::vector{in("x", {p.seq, p.heads, p.head_dim}), pinned(in("positions", {p.seq}), DType::U32),
                           out("out", {p.seq, p.heads, p.head_dim})};
      },
      .validate_params = [partial](const P& p) {
        positive(p.seq, "seq");
        positive(p.heads, "heads");
        positive(p.head_dim, "head_dim");
        if (partial)
          check(p.rotary() >= 2 && p.rotary() % 2 == 0 && p.rotary() <= p.head_dim,
                "parameter 'rotary_dim' must be even, at least 2 and at most head_dim = {}, is {}", p.head_dim,
                p.rotary());
        else
          check(p.head_dim % 2 == 0, "parameter 'head_dim' must be even (channel i pairs with i + head_dim/2), is {}",
                p.head_dim);
        check(std::isfinite(p.base) && p.base > 0, "parameter 'base' must be positive and finite, is {}", p.base);
        (void)checked::mul(checked::mul(p.seq, p.heads, "seq * heads"), p.head_dim, "seq * heads * head_dim");
      },
      .validate_data = [](const P&, const TensorMap& t) { rope_angle::check_positions(t.at("positions")); },
      .generate = [](const P&, TensorMap& t, Rng& r) {
        normal(t["x"], r);
        positions(t["positions"], r);
      },
      .tolerance = [](const P&, DType dt, const TensorMap& in) { return rope_angle::tolerance(dt, magnitude::max_abs(in, "x")); },
      // Per pair: 4 multiplies and 2 adds, and one angle (counted as 2: its cos and sin).
      .cost = [](const P& p, DType dt) {
        const double rows = double(p.seq * p.heads), n = rows * double(p.head_dim);
        return Cost{rows * double(p.rotary()) * 3 + double(p.seq * p.rotary()),
                    bytes(dt, 2 * n) + 4.0 * double(p.seq)};
      },
      .cases = std::move(cases),
      .benches = std::move(benches),
  };
}

RopePositionsParams full(int64_t seq, int64_t heads, int64_t hd, float base = 10000.0f) {
  return {seq, heads, hd, base};
}
RopePartialParams partial(int64_t seq, int64_t heads, int64_t hd, int64_t rot, float base = 10000.0f) {
  RopePartialParams p;
  static_cast<RopePositionsParams&>(p) = full(seq, heads, hd, base);
  p.rotary_dim = rot;
  return p;
}

}  // namespace

const Op& op_apply_rope_positions() {
  static const TypedOp<RopePositionsParams> op(rope_def<RopePositionsParams>(
      false,
      {
          {"seq1_h1_hd2", Tier::Smoke, full(1, 1, 2)},
          {"seq5_h4_hd64", Tier::Smoke, full(5, 4, 64)},
          {"seq7_h3_hd80", Tier::Ci, full(7, 3, 80)},
          {"seq1_h32_hd128_llama3", Tier::Ci, full(1, 32, 128, 500000.0f)},
          {"seq33_h8_hd128_llama3", Tier::Ci, full(33, 8, 128, 500000.0f)},
          {"seq17_h5_hd256", Tier::Ci, full(17, 5, 256)},
          {"seq257_h1_hd64_base1e6", Tier::Ci, full(257, 1, 64, 1e6f)},
          {"llama3_8b_q_seq64", Tier::Full, full(64, 32, 128, 500000.0f)},
      },
      {
          {"llama3_8b_q_prefill512", Tier::Full, full(512, 32, 128, 500000.0f)},
          {"llama3_8b_q_decode", Tier::Full, full(1, 32, 128, 500000.0f)},
      }));
  return op;
}

const Op& op_apply_rope_partial() {
  static const TypedOp<RopePartialParams> op(rope_def<RopePartialParams>(
      true,
      {
          {"seq1_h1_hd64_rot2", Tier::Smoke, partial(1, 1, 64, 2)},
          {"seq5_h4_hd128_rot128", Tier::Smoke, partial(5, 4, 128, 128)},
          {"seq7_h3_hd80_rot32_phi2", Tier::Ci, partial(7, 3, 80, 32)},
          {"seq33_h2_hd64_rot2", Tier::Ci, partial(33, 2, 64, 2)},
          {"seq17_h5_hd96_rot48", Tier::Ci, partial(17, 5, 96, 48)},
          {"seq3_h7_hd80_rot80", Tier::Ci, partial(3, 7, 80, 80)},
          {"seq1_h32_hd80_rot32_phi2", Tier::Ci, partial(1, 32, 80, 32)},
          {"phi2_seq64", Tier::Full, partial(64, 32, 80, 32)},
      },
      {
          // Phi-2: 32 heads of 80, rotary_dim 32.
          {"phi2_prefill512", Tier::Full, partial(512, 32, 80, 32)},
          {"phi2_decode", Tier::Full, partial(1, 32, 80, 32)},
      }));
  return op;
}

}  // namespace ts
