// The tensor family's reference against independent computations on its own generated F32 inputs:
// linear_3d against the gemm reference of the batch * seq rows, linear_3d_bias against a dot and bias
// summed here, gqa_attention against flash_attention on head-major copies, the RoPE ops against
// std::complex rotations in long double, add / mul against numpy's rule written with modulo indices.
// Each comparison is to the last F32 bit or within a few F32 roundings; a wrong index is O(1).
#include <cmath>
#include <complex>
#include <numbers>
#include <string>

#include <gtest/gtest.h>

#include "core/op.h"
#include "core/ops/core_params.h"
#include "core/ops/tensor_params.h"
#include "reference/kernels.h"

namespace ts {
namespace {

// The op's case for `p` in F32 with the reference's outputs written.
template <class P> TensorMap reference_case(const std::string& name, const P& p, uint64_t seed = 5) {
  const Op& op = op_or_throw(name);
  TensorMap t = op.make_case(Params::of(p), DType::F32, seed);
  ref::run(op, Params::of(p), t);
  return t;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.numel(), b.numel());
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.get(i) - b.get(i)));
  return m;
}

TEST(TensorReference, Linear3dIsTheGemmOfItsRows) {
  const Linear3dParams p{.batch = 2, .seq = 3, .k = 37, .n = 11};
  TensorMap t = reference_case("linear_3d", p);
  GemmParams g{.m = 6, .n = 11, .k = 37};
  TensorMap gt = op_or_throw("gemm").make_case(Params::of(g), DType::F32, 1);
  for (int64_t i = 0; i < 6 * 37; ++i) gt["a"].set(i, t["x"].get(i));
  for (int64_t i = 0; i < 11 * 37; ++i) gt["b"].set(i, t["weight"].get(i));
  ref::run(op_or_throw("gemm"), Params::of(g), gt);
  EXPECT_EQ(max_abs_diff(t["out"], gt["out"]), 0.0);
}

TEST(TensorReference, Linear3dBiasAddsTheBiasOnce) {
  Linear3dBiasParams p;
  p.batch = 3, p.seq = 1, p.k = 19, p.n = 7;
  TensorMap t = reference_case("linear_3d_bias", p);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < 7; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 19; ++k) acc += t["x"].get(r * 19 + k) * t["weight"].get(j * 19 + k);
      EXPECT_EQ(t["out"].get(r * 7 + j), double(float(acc + t["bias"].get(j)))) << r << "," << j;
    }
}

// gqa_attention's token-major tensors, transposed into flash_attention's head-major ones, with the
// causal chunk at pos_offset seq_kv - seq_q.
TEST(TensorReference, GqaAttentionIsFlashAttentionTokenMajor) {
  for (const bool causal : {true, false}) {
    const GqaAttentionParams p{.seq_q = 5, .seq_kv = 13, .num_heads = 8, .num_kv_heads = 2, .head_dim = 16,
                               .causal = causal};
    TensorMap t = reference_case("gqa_attention", p);
    const FlashAttentionParams f{.q_len = 5, .kv_len = 13, .pos_offset = causal ? 8 : 0, .num_heads = 8,
                                 .num_kv_heads = 2, .head_dim = 16, .causal = causal, .scale = 0.25f};
    TensorMap ft = op_or_throw("flash_attention").make_case(Params::of(f), DType::F32, 1);
    auto to_head_major = [](const Tensor& src, Tensor& dst, int64_t tokens, int64_t heads, int64_t hd) {
      for (int64_t s = 0; s < tokens; ++s)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < hd; ++c) dst.set((h * tokens + s) * hd + c, src.get((s * heads + h) * hd + c));
    };
    to_head_major(t["q"], ft["q"], 5, 8, 16);
    to_head_major(t["k"], ft["k"], 13, 2, 16);
    to_head_major(t["v"], ft["v"], 13, 2, 16);
    ref::run(op_or_throw("flash_attention"), Params::of(f), ft);
    Tensor back(DType::F32, {5, 8, 16});
    for (int64_t s = 0; s < 5; ++s)
      for (int64_t h = 0; h < 8; ++h)
        for (int64_t c = 0; c < 16; ++c) back.set((s * 8 + h) * 16 + c, ft["out"].get((h * 5 + s) * 16 + c));
    // scale 1/4 is exact in both; the outputs are rounded once from double each.
    EXPECT_EQ(max_abs_diff(t["out"], back), 0.0) << "causal " << causal;
  }
}

// Each pair (x[i], x[i + rot/2]) as a complex number turned by e^{i pos f_i}, in long double.
void expect_complex_rotation(const TensorMap& t, int64_t seq, int64_t heads, int64_t hd, int64_t rot, double base) {
  const uint32_t* pos = t.at("positions").as<uint32_t>();
  const int64_t half = rot / 2;
  double worst = 0;
  for (int64_t s = 0; s < seq; ++s)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t row = (s * heads + h) * hd;
      for (int64_t i = 0; i < half; ++i) {
        const long double f = std::pow(static_cast<long double>(base), -2.0L * i / rot);
        const std::complex<long double> z(t.at("x").get(row + i), t.at("x").get(row + half + i));
        const std::complex<long double> y = z * std::polar(1.0L, static_cast<long double>(pos[s]) * f);
        worst = std::max({worst, std::abs(double(y.real()) - t.at("out").get(row + i)),
                          std::abs(double(y.imag()) - t.at("out").get(row + half + i))});
      }
      for (int64_t c = rot; c < hd; ++c) EXPECT_EQ(t.at("out").get(row + c), t.at("x").get(row + c));
    }
  // One F32 rounding of outputs below 8, and the double angle's error at positions near 2^24.
  EXPECT_LT(worst, 8 * 0x1p-24);
}

TEST(TensorReference, RopeIsAComplexRotation) {
  const RopePositionsParams full{.seq = 9, .heads = 3, .head_dim = 64, .base = 500000.0f};
  expect_complex_rotation(reference_case("apply_rope_positions", full), 9, 3, 64, 64, 500000.0);
  RopePartialParams part;
  part.seq = 7, part.heads = 2, part.head_dim = 80, part.base = 10000.0f, part.rotary_dim = 32;
  expect_complex_rotation(reference_case("apply_rope_partial", part), 7, 2, 80, 32, 10000.0);
}

// numpy's rule: b's index along axis i is i % e_i (e_i is 1 or d_i).
TEST(TensorReference, BroadcastFollowsNumpy) {
  for (const std::string op : {"add", "mul"})
    for (int mask = 0; mask < 8; ++mask) {
      const int64_t d0 = 3, d1 = 4, d2 = 5;
      const BroadcastParams p{d0, d1, d2, mask & 1 ? 1 : d0, mask & 2 ? 1 : d1, mask & 4 ? 1 : d2};
      TensorMap t = reference_case(op, p);
      for (int64_t i0 = 0; i0 < d0; ++i0)
        for (int64_t i1 = 0; i1 < d1; ++i1)
          for (int64_t i2 = 0; i2 < d2; ++i2) {
            const int64_t o = (i0 * d1 + i1) * d2 + i2;
            const int64_t bi = ((i0 % p.e0) * p.e1 + i1 % p.e1) * p.e2 + i2 % p.e2;
            const double a = t["a"].get(o), b = t["b"].get(bi);
            EXPECT_EQ(t["out"].get(o), double(float(op == "add" ? a + b : a * b))) << op << " mask " << mask;
          }
    }
}

}  // namespace
}  // namespace ts
