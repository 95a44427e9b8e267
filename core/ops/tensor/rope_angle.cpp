#include "core/ops/tensor/rope_angle.h"

#include <numbers>

#include <fmt/format.h>

#include "core/error.h"
#include "core/ops/magnitude.h"

namespace ts::rope_angle {

std::vector<uint32_t> turn_words(double base, int64_t rotary_dim) {
  const int64_t half = rotary_dim / 2;
  std::vector<uint32_t> w(static_cast<size_t>(2 * half));
  for (int64_t i = 0; i < half; ++i) {
    // f / (2 pi) < 1/6, so 2^64 times it fits in 64 bits; its 53 significant bits land exactly.
    const double g = inv_freq(base, rotary_dim, i) / (2 * std::numbers::pi);
    const auto fixed = static_cast<uint64_t>(std::ldexp(g, 64));
    w[2 * i] = static_cast<uint32_t>(fixed >> 32);
    w[2 * i + 1] = static_cast<uint32_t>(fixed);
  }
  return w;
}

void check_positions(const Tensor& positions) {
  const uint32_t* pos = positions.as<uint32_t>();
  for (int64_t i = 0; i < positions.numel(); ++i)
    check(pos[i] < kMaxPosition,
          "positions[{}] = {} is 2^24 or more: past 16777215 F32 no longer holds every position", i, pos[i]);
}

// Each output pair is y = a cos - b sin (or b cos + a sin) with a, b inputs, so |a| + |b| <= 2 max|x|,
// the case's largest |input|. Against the reference (angle and sin / cos in double), a device's sin and cos are
// off by (rope_angle.h's scheme, u32 = 2^-24, 2 pi 2^-32 rad = 0.025 u32):
//   the fixed-point turn: under 2^-32 (the floor) + 2^24 2^-53 / 6 (G's rounding): 0.03 u32;
//   OpenCL: the turn's conversion to F32 (|t| < 2^31: 64 units of 2^-32) 1.6 u32, sinpi / cospi
//   4 ulp: 5.7 u32;
//   Vulkan: the remainder's conversion (|rem| <= 2^29: 16 units) 0.4 u32, its scaling to radians (the
//   constant and the product rounded, |x| <= pi/4) 1.6 u32, the polynomials 4 u32 of Horner rounding
//   + 0.04 u32 of truncation (core/approx/sincos.inc): 6.1 u32;
// so 8 u32 covers both, and y is within (8 + 3) u32 (|a| + |b|), the 3 being the rotation's two
// products and its add. The cpu takes sin / cos in double: well inside. The output's own rounding is
// the relative part, as in every elementwise op.
Tolerance tolerance(DType dt, double x_max) {
  const double u32 = 0x1p-24;
  return {(8 + 3) * u32 * 2 * x_max, 2 * unit_roundoff(dt) + 4 * u32,
          fmt::format("rope from positions: sin/cos within 8 u32 at any position (turns in 32-bit fixed point, "
                      "exact quadrant), rotation 3 u32; x (|a| + |b| <= 2 max|x| = {}) abs + 2 u_{} rel",
                      magnitude::str(2 * x_max), dtype_name(dt))};
}

}  // namespace ts::rope_angle
