// The cpu attention kernel over F8_E4M3 rows reads codes without a per-element NaN test, 2^8 too
// small, the factor carried by each row's scale (cpu/attention/attention_rows-inl.h). Both are exact, so its
// result must equal, bit for bit, the F32 kernel's over the decoded rows; a tile holding a NaN code must
// restart its task on the exact path and give the NaN the decoded rows give. Runs on the best target and,
// under ctest's unit/cpu-scalar/attention_f8, on the portable one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/dtype.h"
#include "cpu/attention/attention_kernels.h"
#include "cpu/runtime/simd_target.h"
#include "tests/available_backend.h"

namespace ts::cpu {
namespace {

constexpr int64_t kDim = 32;   // a multiple of every target's lanes: the kernel's vector loops
constexpr int64_t kKeys = 150;  // three tiles, the last one partial
constexpr int64_t kRows = 5;    // a group of 4 rows sharing each load, and one alone

struct State {
  std::vector<float> m, l, acc;
};

// Every e4m3fn code but the two NaNs, in a fixed scatter over the rows: normals, subnormals, zeros of
// both signs, +-448.
std::vector<uint8_t> codes(int64_t n, uint32_t seed) {
  std::vector<uint8_t> c(static_cast<size_t>(n));
  uint32_t x = seed;
  for (auto& v : c) {
    x = x * 1664525u + 1013904223u;
    v = static_cast<uint8_t>(x >> 24);
    if ((v & 0x7F) == 0x7F) v ^= 0x01;
  }
  return c;
}

// One task over keys [0, kKeys) of an affine view, row r seeing keys [lo[r], hi[r]).
State run(DType dt, const void* k, const void* v, const std::vector<float>& q) {
  State s{std::vector<float>(kRows, -std::numeric_limits<float>::infinity()), std::vector<float>(kRows, 0.0f),
          std::vector<float>(kRows * kDim, 0.0f)};
  const float* rows[kRows];
  for (int64_t r = 0; r < kRows; ++r) rows[r] = q.data() + r * kDim;
  const int64_t lo[kRows] = {0, 3, 0, 70, 64}, hi[kRows] = {kKeys, kKeys - 5, 64, 129, 65};
  const KvView kv{k, kDim, nullptr, 0, v, kDim, kDim, 0, kDim};
  const AttnBlock blk{rows, lo, hi, kRows};
  attend(dt, AttnTask{0, kKeys, s.m.data(), s.l.data(), s.acc.data()}, blk, kv, 0.125f);
  return s;
}

std::vector<float> decoded(const std::vector<uint8_t>& c) {
  std::vector<float> f(c.size());
  for (size_t i = 0; i < c.size(); ++i) f[i] = f8e4m3_to_f32(c[i]);
  return f;
}

// Equal bit for bit, a NaN matching any NaN.
void expect_same(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << "[" << i << "] = " << got[i] << ", want NaN";
    } else {
      uint32_t a, b;
      std::memcpy(&a, &got[i], 4);
      std::memcpy(&b, &want[i], 4);
      EXPECT_EQ(a, b) << what << "[" << i << "] = " << got[i] << ", want " << want[i];
    }
  }
}

void expect_matches_decoded(const std::vector<uint8_t>& k, const std::vector<uint8_t>& v) {
  std::vector<float> q(kRows * kDim);
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.37f * static_cast<float>(i)) * 0.01f;  // scores of order 1: no one-hot softmax
  const std::vector<float> kf = decoded(k), vf = decoded(v);
  const State got = run(DType::F8_E4M3, k.data(), v.data(), q);
  const State want = run(DType::F32, kf.data(), vf.data(), q);
  expect_same(got.m, want.m, "m");
  expect_same(got.l, want.l, "l");
  expect_same(got.acc, want.acc, "acc");
}

class CpuAttentionF8 : public ::testing::Test {
 protected:
  // A build without the target TOUCHSTONE_CPU_SIMD names (the sanitizer build compiles EMU128, not
  // SCALAR) has no cpu backend under that cap: skip, as every cpu kernel test does.
  void SetUp() override {
    if (test::available_backend("cpu") == nullptr) GTEST_SKIP() << "cpu backend unavailable in this build";
    select_simd_target();
  }
};

TEST_F(CpuAttentionF8, MatchesTheF32KernelOverDecodedRows) {
  expect_matches_decoded(codes(kKeys * kDim, 1), codes(kKeys * kDim, 2));
}

TEST_F(CpuAttentionF8, NaNKeyCodeInALaterTileRestartsOnTheExactPath) {
  std::vector<uint8_t> k = codes(kKeys * kDim, 3), v = codes(kKeys * kDim, 4);
  k[100 * kDim + 7] = 0x7F;  // key 100: seen by rows 0, 1 and 3
  expect_matches_decoded(k, v);
}

TEST_F(CpuAttentionF8, NaNValueCodeInTheFirstTile) {
  std::vector<uint8_t> k = codes(kKeys * kDim, 5), v = codes(kKeys * kDim, 6);
  v[10 * kDim + kDim - 1] = 0xFF;  // negative NaN, key 10: seen by rows 0, 1 and 2
  expect_matches_decoded(k, v);
}

}  // namespace
}  // namespace ts::cpu
