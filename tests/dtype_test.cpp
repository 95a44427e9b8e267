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

}  // namespace
}  // namespace ts
