// Conversions: round to nearest even at the halfway points, specials kept, saturation for e4m3fn.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "core/dtype.h"

namespace ts {
namespace {

TEST(DType, F16RoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t v = static_cast<uint16_t>(h);
    if ((v & 0x7c00) == 0x7c00) continue;  // Inf / NaN checked below
    ASSERT_EQ(f32_to_f16(f16_to_f32(v)), v) << std::hex << h;
  }
}

TEST(DType, F16RoundsHalfwayToEven) {
  // 1 + 2^-11 lies halfway between 1 and the next f16 (1 + 2^-10): ties go to the even mantissa, 1.
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even): rounds up.
  EXPECT_EQ(f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds past the largest finite value: Inf
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);  // halfway to the smallest subnormal: even (zero)
  EXPECT_EQ(f32_to_f16(0x1.8p-24f), 0x0002);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, Bf16RoundsHalfwayToEven) {
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);       // tie, even below
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);   // tie, even above
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);  // just above the tie
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(-INFINITY)), -INFINITY);
}

TEST(DType, F8E4M3SaturatesAndRoundTrips) {
  for (int v = 0; v < 256; ++v) {
    if ((v & 0x7f) == 0x7f) continue;  // NaN encodings
    ASSERT_EQ(f32_to_f8e4m3(f8e4m3_to_f32(static_cast<uint8_t>(v))), v) << v;
  }
  EXPECT_EQ(f8e4m3_to_f32(f32_to_f8e4m3(1000.0f)), 448.0f);
  EXPECT_EQ(f8e4m3_to_f32(f32_to_f8e4m3(-1000.0f)), -448.0f);
}

// e4m3fn against a brute-force nearest search over all 256 codes: every code decodes and encodes
// back; every midpoint between neighbours rounds to the even code; values just either side of a
// midpoint round to the nearer; anything at or beyond 448 saturates (no infinities in e4m3fn).
uint8_t nearest_e4m3(double x) {
  uint8_t best = 0;
  double best_d = INFINITY;
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;  // NaN
    const double v = f8e4m3_to_f32(static_cast<uint8_t>(c));
    if (std::signbit(v) != std::signbit(x)) continue;
    const double d = std::fabs(v - x);
    if (d < best_d || (d == best_d && (c & 1) == 0)) best = static_cast<uint8_t>(c), best_d = d;
  }
  return best;
}

TEST(DType, F8E4M3EveryCodeMidpointAndSaturation) {
  for (int s = 0; s < 2; ++s) {
    const uint8_t sign = s ? 0x80 : 0;
    for (int c = 0; c < 0x7e; ++c) {  // c and c + 1 are neighbours of one sign, both finite
      const float lo = f8e4m3_to_f32(sign | c), hi = f8e4m3_to_f32(sign | (c + 1));
      ASSERT_EQ(f32_to_f8e4m3(lo), sign | c) << c;
      const float mid = 0.5f * (lo + hi);  // exact in F32
      const uint8_t even = (c & 1) ? (sign | (c + 1)) : (sign | c);
      ASSERT_EQ(f32_to_f8e4m3(mid), even) << "midpoint above code " << c;
      ASSERT_EQ(f32_to_f8e4m3(mid), nearest_e4m3(mid)) << c;
      ASSERT_EQ(f32_to_f8e4m3(std::nextafter(mid, 0.0f)), nearest_e4m3(std::nextafter(mid, 0.0f))) << c;
      ASSERT_EQ(f32_to_f8e4m3(std::nextafter(mid, s ? -INFINITY : INFINITY)),
                nearest_e4m3(std::nextafter(mid, s ? -INFINITY : INFINITY)))
          << c;
    }
    const float m = s ? -1.0f : 1.0f;
    EXPECT_EQ(f32_to_f8e4m3(m * 448.0f), sign | 0x7e);
    EXPECT_EQ(f32_to_f8e4m3(m * 464.0f), sign | 0x7e);  // the midpoint to a code that does not exist
    EXPECT_EQ(f32_to_f8e4m3(m * 1e30f), sign | 0x7e);
    EXPECT_EQ(f32_to_f8e4m3(m * INFINITY), sign | 0x7e);
  }
  EXPECT_TRUE(std::isnan(f8e4m3_to_f32(0x7f)));
  EXPECT_TRUE(std::isnan(f8e4m3_to_f32(0xff)));
  EXPECT_EQ(f32_to_f8e4m3(0x1p-10f), 0x00);  // half the smallest subnormal (2^-9): ties to even, zero
  EXPECT_EQ(f32_to_f8e4m3(0x1.8p-9f), 0x02); // 1.5 subnormal steps: ties to even, 2
}

}  // namespace
}  // namespace ts
