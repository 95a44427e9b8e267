// The cpu backend's pool quantizers (cpu/attention/kv_append.cpp) work in SIMD lanes from x * (1 /
// scale), dividing only near a rounding boundary; they must give the reference's code for every input.
// F8_E4M3 (core/dtype.h's encoder, through frexp and nearbyint): each code's value, the midpoints
// between neighbouring codes (ties to even) and the floats on either side of them, the subnormal
// codes, saturation past 448, signed zeros, infinities, NaN, and a million random floats over the
// whole range. I8 (round half away from zero): every tie and the floats beside it. Both at scales
// whose reciprocal is inexact, where the product and the quotient differ next to a boundary. Runs on
// the best target and, under ctest's unit/cpu-scalar/kv_quantize, on the portable one.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "core/dtype.h"
#include "cpu/attention/kv_quantize.h"
#include "cpu/runtime/simd_target.h"
#include "tests/available_backend.h"

namespace ts::cpu {
namespace {

class CpuKvQuantize : public ::testing::Test {
 protected:
  // As every cpu kernel test: under a TOUCHSTONE_CPU_SIMD this build lacks (the sanitizer build
  // compiles EMU128, not SCALAR) there is no cpu backend, so skip.
  void SetUp() override {
    if (test::available_backend("cpu") == nullptr) GTEST_SKIP() << "cpu backend unavailable in this build";
    select_simd_target();
  }
};

// Encodes x / scale with the cpu encoder and compares every code with the reference's.
void expect_reference_codes(const std::vector<float>& x, float scale) {
  std::vector<uint8_t> got(x.size());
  quantize_f8e4m3(x.data(), static_cast<int64_t>(x.size()), scale, got.data());
  int bad = 0;
  for (size_t i = 0; i < x.size() && bad < 10; ++i) {
    const uint8_t want = f32_to_f8e4m3(x[i] / scale);
    if (got[i] != want) {
      ++bad;
      ADD_FAILURE() << "x = " << x[i] << " (bits 0x" << std::hex << std::bit_cast<uint32_t>(x[i]) << "), scale "
                    << scale << ": code 0x" << int(got[i]) << ", the reference's 0x" << int(want) << std::dec;
    }
  }
}

TEST_F(CpuKvQuantize, F8CodesMidpointsAndTheirNeighbours) {
  std::vector<float> x;
  for (int c = 0; c <= 0x7e; ++c) {
    const float v = f8e4m3_to_f32(static_cast<uint8_t>(c));
    const float up = c < 0x7e ? f8e4m3_to_f32(static_cast<uint8_t>(c + 1)) : 480.0f;
    const float mid = (v + up) / 2;  // exact: neighbouring codes differ in one bit below F32's precision
    for (float f : {v, mid, std::nextafter(v, 0.0f), std::nextafter(v, 1e9f), std::nextafter(mid, 0.0f),
                    std::nextafter(mid, 1e9f)})
      for (float s : {1.0f, -1.0f}) x.push_back(s * f);
  }
  expect_reference_codes(x, 1.0f);
}

TEST_F(CpuKvQuantize, F8SpecialValues) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f, -0.0f, inf, -inf, 448.0f, -448.0f, 464.0f, 500.0f, 1e30f, -3e38f,
                                0x1p-6f, 0x1p-7f, 0x1p-9f, 0x1p-10f, 0x1.8p-10f, 0x1p-11f, 1e-40f, -1e-45f,
                                std::numeric_limits<float>::min(), 1.0f, 2.0f, 3.0f};
  expect_reference_codes(x, 1.0f);
  // A NaN among numbers: its vector takes the scalar path, and its neighbours keep their codes.
  std::vector<float> with_nan(x);
  with_nan[3] = std::numeric_limits<float>::quiet_NaN();
  std::vector<uint8_t> got(with_nan.size());
  quantize_f8e4m3(with_nan.data(), static_cast<int64_t>(with_nan.size()), 1.0f, got.data());
  EXPECT_EQ(got[3] & 0x7f, 0x7f) << "NaN must stay NaN";
  for (size_t i = 0; i < with_nan.size(); ++i) {
    if (i != 3) {
      EXPECT_EQ(got[i], f32_to_f8e4m3(with_nan[i])) << "x = " << with_nan[i];
    }
  }
}

TEST_F(CpuKvQuantize, F8RandomFloatsOverTheWholeRange) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> exponent(-24, 10);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::vector<float> x(1000003);  // not a multiple of any target's lanes: the tail too
  for (float& v : x) v = (rng() & 1 ? 1.0f : -1.0f) * std::ldexp(mantissa(rng), exponent(rng));
  expect_reference_codes(x, 1.0f);
  expect_reference_codes(x, 0.37f);    // the quotient, not x, is encoded
  expect_reference_codes(x, 3.0e-3f);  // quotients past 448 saturate
}

// Scales whose reciprocal is not exact, so that x * (1 / scale) and x / scale differ in the last
// place for many x; 1 / 127 of a typical row maximum among them.
const float kInexactScales[] = {0.37f, 3.0e-3f, 0.1f, 2.5f / 127.0f, 1.0f / 3.0f, 7.77e-5f};

// The 33 floats within 16 units in the last place of v * scale (the quotient lands next to v). The
// quantizers redo a whole call from the quotients once any lane is near a boundary, so each such
// group is quantized in a call of its own: one call over all of them would hide a lane whose test
// is missing behind another lane's.
std::vector<float> around_product(float v, float scale) {
  float f = v * scale;
  for (int u = 0; u < 16; ++u) f = std::nextafter(f, -1e30f);
  std::vector<float> out;
  for (int u = 0; u < 33; ++u, f = std::nextafter(f, 1e30f)) out.push_back(f);
  return out;
}

TEST_F(CpuKvQuantize, F8QuotientsNextToMidpoints) {
  for (int c = 0; c < 0x7e; ++c) {
    const float mid = (f8e4m3_to_f32(static_cast<uint8_t>(c)) + f8e4m3_to_f32(static_cast<uint8_t>(c + 1))) / 2;
    for (float scale : kInexactScales)
      for (float v : {mid, -mid}) expect_reference_codes(around_product(v, scale), scale);
  }
}

// Compares quantize_i8's codes for x with the reference's round(x / scale), clamped.
void expect_reference_i8(const std::vector<float>& x, float scale) {
  std::vector<int8_t> got(x.size());
  quantize_i8(x.data(), static_cast<int64_t>(x.size()), scale, got.data());
  int bad = 0;
  for (size_t i = 0; i < x.size() && bad < 10; ++i) {
    const auto want = static_cast<int8_t>(std::clamp(std::round(x[i] / scale), -127.0f, 127.0f));
    if (got[i] != want) {
      ++bad;
      ADD_FAILURE() << "x = " << x[i] << " (bits 0x" << std::hex << std::bit_cast<uint32_t>(x[i]) << std::dec
                    << "), scale " << scale << ": code " << int(got[i]) << ", the reference's " << int(want);
    }
  }
}

TEST_F(CpuKvQuantize, I8TiesAndTheirNeighbours) {
  for (float scale : kInexactScales) {
    for (int k = -130; k <= 130; ++k) expect_reference_i8(around_product(static_cast<float>(k) + 0.5f, scale), scale);
    for (float v : {0.0f, 127.0f, -127.0f, 1e-30f, 1e30f, -1e30f}) expect_reference_i8(around_product(v, scale), scale);
  }
}

TEST_F(CpuKvQuantize, SubnormalScaleDivides) {
  // 1 / scale overflows: every vector must divide (a product would be Inf or NaN).
  const float scale = 1e-40f;
  std::vector<float> x;
  for (int k = -40; k <= 40; ++k) x.push_back(static_cast<float>(k) * 3e-42f);
  std::vector<int8_t> got(x.size());
  quantize_i8(x.data(), static_cast<int64_t>(x.size()), scale, got.data());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(got[i], static_cast<int8_t>(std::clamp(std::round(x[i] / scale), -127.0f, 127.0f))) << "x = " << x[i];
  expect_reference_codes(x, scale);
}

// kv_append_paged's rows in shares that start and end inside tokens and inside either side (as on a
// machine with more threads than this one's two, whose shares meet at the k / v boundary): the pools
// and scales equal one share's over all rows, for every pool type, streamed or not.
TEST_F(CpuKvQuantize, AppendSharesSplitAnywhere) {
  const int64_t tokens = 7, heads = 3, hd = 40, bs = 4, before = 2;
  const int64_t blocks = (before + tokens + bs - 1) / bs;
  const std::vector<uint32_t> table = {2, 0, 3};
  ASSERT_GE(static_cast<int64_t>(table.size()), blocks);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> k_in(static_cast<size_t>(tokens * heads * hd)), v_in(k_in.size());
  for (float& x : k_in) x = normal(rng);
  for (float& x : v_in) x = normal(rng);
  for (DType dt : {DType::I8, DType::F8_E4M3, DType::F16, DType::BF16})
    for (bool stream : {false, true}) {
      const size_t es = dtype_size(dt), slots = static_cast<size_t>(4 * heads * bs);
      auto run = [&](const std::vector<int64_t>& cuts) {
        std::vector<std::byte> k_pool(slots * hd * es), v_pool(k_pool.size());
        std::vector<float> k_scales(slots, -1.0f), v_scales(slots, -1.0f);
        const bool scaled = dt == DType::I8 || dt == DType::F8_E4M3;
        KvAppendJob job;
        job.side[0] = {k_in.data(), k_pool.data(), scaled ? k_scales.data() : nullptr};
        job.side[1] = {v_in.data(), v_pool.data(), scaled ? v_scales.data() : nullptr};
        job.dtype = dt;
        job.elem_size = es;
        job.block_indices = table.data();
        job.rows = tokens * heads;
        job.heads = heads;
        job.head_dim = hd;
        job.block_size = bs;
        job.cache_len_before = before;
        job.stream = stream;
        for (size_t c = 0; c + 1 < cuts.size(); ++c) append_kv_rows(job, cuts[c], cuts[c + 1]);
        return std::tuple{k_pool, v_pool, k_scales, v_scales};
      };
      const int64_t n = 2 * tokens * heads;
      const auto whole = run({0, n});
      EXPECT_EQ(whole, run({0, 1, 5, 13, 21, 22, 30, n})) << dtype_name(dt) << (stream ? ", streamed" : "");
      EXPECT_EQ(whole, run({0, 20, n})) << dtype_name(dt) << (stream ? ", streamed" : "");
      // Every slot a token went to was written: no share skipped a row.
      EXPECT_EQ(std::count(std::get<2>(whole).begin(), std::get<2>(whole).end(), -1.0f),
                static_cast<std::ptrdiff_t>(dt == DType::I8 || dt == DType::F8_E4M3 ? 4 * heads * bs - tokens * heads : 4 * heads * bs))
          << dtype_name(dt);
    }
}

}  // namespace
}  // namespace ts::cpu
