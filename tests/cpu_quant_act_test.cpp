// The cpu backend's activation quantization for the int8 GEMV and GEMM (cpu/quant/quant_gemm.h): the bound
// its tolerance is derived from (|a - d q| <= d / 2, d = amax / 127 per block) and the sums the
// integer dot takes the offsets and mins from.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "cpu/quant/quant_gemm.h"

namespace ts::cpu {
namespace {

std::vector<float> normal_row(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> a(static_cast<size_t>(n));
  for (auto& x : a) x = nd(rng);
  return a;
}

// Each block of `len` values of a against its int8 codes q and scale d: the quantum bound, the
// range, and the block's largest value at +-127.
void expect_block(const float* a, const int8_t* q, float d, int len) {
  float amax = 0;
  for (int l = 0; l < len; ++l) amax = std::max(amax, std::fabs(a[l]));
  EXPECT_FLOAT_EQ(d, amax / 127.0f);
  bool hit_max = false;
  for (int l = 0; l < len; ++l) {
    EXPECT_LE(std::abs(q[l]), 127);
    EXPECT_LE(std::fabs(a[l] - d * q[l]), 0.5f * d * (1 + 1e-5f)) << "value " << l;
    hit_max = hit_max || std::abs(q[l]) == 127;
  }
  EXPECT_TRUE(hit_max);
}

int sum_of(const int8_t* q, int n) {
  int s = 0;
  for (int l = 0; l < n; ++l) s += q[l];
  return s;
}

TEST(CpuQuantActivations, BlocksOf256HoldTheQuantumAndTheirSums) {
  const int64_t m = 2, k = 512;
  const std::vector<float> a = normal_row(m * k, 7);
  const QuantActivations act(DType::F32, a.data(), m, k, false, true);
  ASSERT_EQ(act.rows8k.size(), 2u);
  EXPECT_TRUE(act.rows8.empty());
  EXPECT_TRUE(act.sums.empty());
  for (int64_t i = 0; i < m; ++i) {
    const ActQ8K& r = act.rows8k[static_cast<size_t>(i)];
    for (int64_t b = 0; b < k / 256; ++b) expect_block(a.data() + i * k + 256 * b, r.q + 256 * b, r.d[b], 256);
    for (int64_t j = 0; j < k / 16; ++j) EXPECT_EQ(r.bs16[j], sum_of(r.q + 16 * j, 16));
    for (int64_t j = 0; j < k / 32; ++j) EXPECT_EQ(r.bs32[j], sum_of(r.q + 32 * j, 32));
  }
}

TEST(CpuQuantActivations, BlocksOf32HoldTheQuantumAndTheirSums) {
  const int64_t m = 3, k = 96;
  const std::vector<float> a = normal_row(m * k, 11);
  const QuantActivations act(DType::F32, a.data(), m, k, true, false);
  ASSERT_EQ(act.rows8.size(), 3u);
  EXPECT_TRUE(act.rows8k.empty());
  for (int64_t i = 0; i < m; ++i) {
    const ActQ8& r = act.rows8[static_cast<size_t>(i)];
    for (int64_t b = 0; b < k / 32; ++b) {
      expect_block(a.data() + i * k + 32 * b, r.q + 32 * b, r.d[b], 32);
      EXPECT_FLOAT_EQ(r.fs32[b], r.d[b] * static_cast<float>(sum_of(r.q + 32 * b, 32)));
      EXPECT_FLOAT_EQ(r.fs16[2 * b + 1], r.d[b] * static_cast<float>(sum_of(r.q + 32 * b + 16, 16)));
    }
  }
}

TEST(CpuQuantActivations, ZeroBlockHasZeroScaleAndCodes) {
  std::vector<float> a(256, 0.0f);
  const QuantActivations act(DType::F32, a.data(), 1, 256, true, true);
  ASSERT_EQ(act.rows8k.size(), 1u);
  EXPECT_EQ(act.rows8k[0].d[0], 0.0f);
  EXPECT_EQ(sum_of(act.rows8k[0].q, 256), 0);
  for (int l = 0; l < 256; ++l) EXPECT_EQ(act.rows8[0].q[l], 0);
}

// A non-finite activation has no int8 form: the exact GEMV's per-16 sums are made instead.
TEST(CpuQuantActivations, NonFiniteActivationsTakeTheExactPath) {
  std::vector<float> a = normal_row(256, 3);
  a[17] = std::numeric_limits<float>::infinity();
  const QuantActivations act(DType::F32, a.data(), 1, 256, true, true);
  EXPECT_TRUE(act.rows8.empty());
  EXPECT_TRUE(act.rows8k.empty());
  EXPECT_EQ(act.sums.size(), 16u);
}

// Prefill (m > 4) quantizes too; with a non-finite value anywhere gguf_gemm takes the exact route
// (sgemm on decoded panels): the finite rows then match that route run on purpose, bit for bit, and
// not the int8 one.
TEST(CpuQuantActivations, NonFinitePrefillTakesTheExactRoute) {
  const int64_t m = 7, k = 256, n_rows = 16;
  std::vector<float> a = normal_row(m * k, 5);
  const QuantActivations quantized(DType::F32, a.data(), m, k, false, true);
  EXPECT_EQ(quantized.rows8k.size(), static_cast<size_t>(m));
  EXPECT_TRUE(quantized.sums.empty());  // the sums serve the exact GEMV of m <= 4 only
  std::vector<uint8_t> w(static_cast<size_t>(n_rows * 144));
  std::mt19937 rng(9);
  for (auto& b : w) b = static_cast<uint8_t>(rng());
  for (int64_t r = 0; r < n_rows; ++r) {  // finite F16 super-block scales: d = 2^-8, dmin = 2^-9
    w[static_cast<size_t>(r * 144)] = 0x00, w[static_cast<size_t>(r * 144 + 1)] = 0x1c;
    w[static_cast<size_t>(r * 144 + 2)] = 0x00, w[static_cast<size_t>(r * 144 + 3)] = 0x18;
  }
  std::vector<float> int8_out(static_cast<size_t>(m * n_rows)), exact_out(int8_out.size()), got(int8_out.size());
  gguf_gemm(QuantKind::Q4_K, quantized, w.data(), n_rows, int8_out.data(), n_rows, true);
  gguf_gemm(QuantKind::Q4_K, quantized, w.data(), n_rows, exact_out.data(), n_rows, false);
  EXPECT_NE(int8_out, exact_out);
  a[3 * k + 17] = std::numeric_limits<float>::quiet_NaN();
  const QuantActivations nan_row(DType::F32, a.data(), m, k, false, true);
  EXPECT_TRUE(nan_row.rows8k.empty());
  gguf_gemm(QuantKind::Q4_K, nan_row, w.data(), n_rows, got.data(), n_rows, true);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t r = 0; r < n_rows; ++r) {
      const size_t at = static_cast<size_t>(i * n_rows + r);
      if (i == 3)
        EXPECT_TRUE(std::isnan(got[at]));
      else
        EXPECT_EQ(got[at], exact_out[at]) << "row " << i << " output " << r;
    }
}

}  // namespace
}  // namespace ts::cpu
