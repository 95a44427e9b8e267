// The cpu backend's integer dot (cpu/quant/quant_rows.h's rows_int8) against the same product computed in
// double from the reference's dequantized weights and the int8 activations it was given: the two
// differ by F32 rounding only, so any misplaced code, activation or scale (the paired activation
// order of Q4_0 / Q4_1 included) shows as an error far above the bound. Run on the best SIMD target
// and, through ctest's unit/cpu-scalar entry, on the portable one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/quant/formats.h"
#include "cpu/quant/quant_gemm.h"
#include "cpu/quant/quant_rows.h"
#include "cpu/runtime/simd_target.h"
#include "tests/available_backend.h"

namespace ts::cpu {
namespace {

class CpuQuantInt8Dot : public ::testing::Test {
 protected:
  // TOUCHSTONE_CPU_SIMD takes effect here (ctest's unit/cpu-scalar entry), as in every cpu kernel
  // test; a build that lacks the target it names has no cpu backend: skip.
  void SetUp() override {
    if (test::available_backend("cpu") == nullptr) GTEST_SKIP() << "cpu backend unavailable in this build";
    select_simd_target();
  }
};

// n_rows weight rows of k values: random codes (or, extreme, each kind's largest code everywhere:
// every bit of the codes, scales and mins set, but Q8_0's signed codes all -128), and random finite
// F16 scales (mantissa and sign vary from block to block, so a scale applied to the wrong block is seen).
std::vector<uint8_t> random_rows(const quant::Format& f, int64_t n_rows, int64_t k, uint32_t seed, bool extreme) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> w(static_cast<size_t>(n_rows * quant::row_bytes(f, k)));
  const uint8_t fill = f.kind == QuantKind::Q8_0 ? 0x80 : 0xFF;
  for (auto& b : w) b = extreme ? fill : static_cast<uint8_t>(rng());
  for (size_t b = 0; b < w.size(); b += static_cast<size_t>(f.block_bytes))
    for (const int16_t at : f.f16_scales)
      if (at >= 0) {
        const float scale = std::ldexp(1.0f + static_cast<float>(rng() % 1024) / 1024.0f, -6) * (rng() % 2 ? 1 : -1);
        const uint16_t h = f32_to_f16(scale);
        w[b + static_cast<size_t>(at)] = static_cast<uint8_t>(h & 0xFF);
        w[b + static_cast<size_t>(at) + 1] = static_cast<uint8_t>(h >> 8);
      }
  return w;
}

// extreme: the largest codes against activations all +1 (even rows) or all -1 (odd rows), which
// quantize to +-127: the kernels' i16 partial sums at their bound, where a sum that wraps shows.
void expect_exact_up_to_f32(QuantKind kind, int64_t k, int64_t m, bool extreme = false) {
  const quant::Format& f = quant::block_format(kind);
  const bool k_blocks = f.block_elems == 256;
  const int64_t n_rows = 5, act_block = k_blocks ? 256 : 32;
  std::mt19937 rng(static_cast<uint32_t>(7 * k + m));
  std::normal_distribution<float> nd;
  std::vector<float> a(static_cast<size_t>(m * k));
  for (size_t j = 0; j < a.size(); ++j) a[j] = extreme ? ((j / static_cast<size_t>(k)) % 2 ? -1.0f : 1.0f) : nd(rng);
  const QuantActivations act(DType::F32, a.data(), m, k, !k_blocks, k_blocks);
  ASSERT_EQ(k_blocks ? act.rows8k.size() : act.rows8.size(), static_cast<size_t>(m));
  const std::vector<uint8_t> w = random_rows(f, n_rows, k, 3, extreme);
  std::vector<float> got(static_cast<size_t>(m * n_rows), NAN), row(static_cast<size_t>(k));
  rows_int8(kind, w.data(), k, 0, n_rows, act.rows8.data(), act.rows8k.data(), m, got.data(), n_rows);
  for (int64_t r = 0; r < n_rows; ++r) {
    f.dequantize_row(w.data() + r * quant::row_bytes(f, k), row.data(), k);
    double wmax = 0;
    for (float x : row) wmax = std::max(wmax, std::fabs(static_cast<double>(x)));
    for (int64_t i = 0; i < m; ++i) {
      const int8_t* q = k_blocks ? act.rows8k[static_cast<size_t>(i)].q : act.rows8[static_cast<size_t>(i)].q;
      const float* d = k_blocks ? act.rows8k[static_cast<size_t>(i)].d : act.rows8[static_cast<size_t>(i)].d;
      double want = 0, mass = 0;
      for (int64_t c = 0; c < k; ++c) {
        const double ac = static_cast<double>(d[c / act_block]) * q[c];
        want += row[static_cast<size_t>(c)] * ac;
        mass += std::fabs(ac);
      }
      // The integer sums are exact; each F32 partial the kernel adds (a block's scale times its codes,
      // an offset or min times the activations' sum) is at most 4 max|w| per unit of |activation| for
      // these blocks (a random block's codes span their range), and it is rounded at most once per
      // block it passes plus the final lane sum: k / 32 + 16 roundings.
      const double bound = static_cast<double>(k / 32 + 16) * unit_roundoff(DType::F32) * 4 * wmax * mass;
      EXPECT_NEAR(got[static_cast<size_t>(i * n_rows + r)], want, bound)
          << enum_name(kind) << " k " << k << " m " << m << " activation row " << i << " weight row " << r;
    }
  }
}

// k = 608: two full groups of 8 blocks of 32 (the paired order) and a tail of 3 (natural order);
// m = 6 takes the prefill loop (4 activation rows, then 2).
TEST_F(CpuQuantInt8Dot, BlocksOf32MatchTheExactProductOfTheQuantizedActivations) {
  for (QuantKind kind : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0})
    for (int64_t k : {96, 256, 608})
      for (int64_t m : {1, 2, 3, 4, 6}) expect_exact_up_to_f32(kind, k, m);
}

TEST_F(CpuQuantInt8Dot, BlocksOf256MatchTheExactProductOfTheQuantizedActivations) {
  for (QuantKind kind : {QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K})
    for (int64_t m : {1, 2, 3, 4, 6}) expect_exact_up_to_f32(kind, 768, m);
}

TEST_F(CpuQuantInt8Dot, LargestCodesAgainstFullScaleActivationsDoNotWrap) {
  for (QuantKind kind : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K})
    for (int64_t m : {1, 2, 6}) expect_exact_up_to_f32(kind, 512, m, true);
}

// rows_int8 of `kind` with the VNNI step switched on, then off, on the same data: equal bit for bit
// (the same integer sums in the same lanes, the same F32 steps). k: two pairs of blocks of 256 and a
// lone one, or five groups of 8 blocks of 32 and a tail of 3 (a pair and a lone block). Activations:
// normal, or every value +-1 with random signs (all codes +-127). Weights: random bytes (every code,
// scale and min value), or each kind's extreme (random_rows: the largest codes and scales, Q8_0's -128).
void expect_vnni_matches_256_bit(QuantKind kind, int64_t m, bool full_scale, bool extreme_weights) {
  const quant::Format& f = quant::block_format(kind);
  const bool k_blocks = f.block_elems == 256;
  const int64_t k = k_blocks ? 5 * 256 : 43 * 32, n_rows = 7;
  std::mt19937 rng(static_cast<uint32_t>(31 * m + 2 * full_scale + extreme_weights));
  std::normal_distribution<float> nd;
  std::vector<float> a(static_cast<size_t>(m * k));
  for (float& x : a) x = full_scale ? (rng() % 2 ? 1.0f : -1.0f) : nd(rng);
  const QuantActivations act(DType::F32, a.data(), m, k, !k_blocks, k_blocks);
  ASSERT_EQ(k_blocks ? act.rows8k.size() : act.rows8.size(), static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* q = k_blocks ? act.rows8k[static_cast<size_t>(i)].q : act.rows8[static_cast<size_t>(i)].q;
    const bool all_full = std::all_of(q, q + k, [](int8_t c) { return c == 127 || c == -127; });
    ASSERT_TRUE(all_full || !full_scale);
  }
  const std::vector<uint8_t> w = random_rows(f, n_rows, k, 5 + static_cast<uint32_t>(m), extreme_weights);
  std::vector<float> vnni(static_cast<size_t>(m * n_rows), NAN), narrow(vnni.size(), NAN);
  rows_int8(kind, w.data(), k, 0, n_rows, act.rows8.data(), act.rows8k.data(), m, vnni.data(), n_rows);
  allow_int8_vnni(false);
  EXPECT_FALSE(int8_vnni_step());  // not ASSERT: the step is switched back on below whatever happens
  rows_int8(kind, w.data(), k, 0, n_rows, act.rows8.data(), act.rows8k.data(), m, narrow.data(), n_rows);
  allow_int8_vnni(true);
  for (size_t j = 0; j < vnni.size(); ++j) {
    uint32_t x, y;
    std::memcpy(&x, &vnni[j], 4);
    std::memcpy(&y, &narrow[j], 4);
    EXPECT_EQ(x, y) << enum_name(kind) << " m " << m << (full_scale ? " +-127" : " normal") << " activations, "
                    << (extreme_weights ? "extreme" : "random") << " weights: activation row " << j / n_rows
                    << " weight row " << j % n_rows << ": VNNI " << vnni[j] << ", 256-bit " << narrow[j];
  }
}

TEST_F(CpuQuantInt8Dot, VnniStepMatchesThe256BitStepBitForBit) {
  if (!int8_vnni_step()) {
    GTEST_SKIP() << "no AVX-512 VNNI step here (the CPU lacks VNNI or the SIMD target is below AVX-512)";
  }
  for (QuantKind kind : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K})
    for (int64_t m : {1, 2, 3, 4, 6})
      for (bool full_scale : {false, true})
        for (bool extreme_weights : {false, true}) expect_vnni_matches_256_bit(kind, m, full_scale, extreme_weights);
}

}  // namespace
}  // namespace ts::cpu
