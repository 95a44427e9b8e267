#pragma once
// The angles of apply_rope_positions / apply_rope_partial, and how a device computes them in F32
// without the error growing with the position.
//
// The angle of pair i at position p is p * f_i, f_i = base^(-2i / rotary_dim). In plain F32 the
// product alone is off by up to u32 * p * f_i radians: near p = 2^24 that is a whole radian, and
// sin / cos of it are noise. Only the angle modulo a turn matters, so a device works in turns in
// fixed point: the host (this file, in double) gives each pair G_i = round(2^64 * f_i / (2 pi)) as
// two 32-bit words (hi, lo), and the device takes the turn's 32-bit fraction
//     t = p * hi + mulhi(p, lo)   (mod 2^32, the integer unit's own wrap-around)
// which is floor(2^32 * frac(p * G_i / 2^64)): exact integer arithmetic, off by under 2^-32 turns
// plus p * 2^-64 * (G_i's error, 2^-53 relative) at any position below 2^24. Read as a signed
// integer, t / 2^32 is the angle in turns in [-1/2, 1/2). OpenCL converts it to F32 (the one
// rounding) and takes sinpi / cospi of t / 2^31 (4 ulp). Vulkan, whose sin / cos promise nothing
// useful, splits off the quadrant exactly: q = round(t / 2^30), remainder t - q 2^30 in [-2^29, 2^29]
// (an eighth of a turn), converts and scales that to radians in [-pi/4, pi/4], evaluates the Taylor
// polynomials of core/approx/sincos.inc and swaps sin and cos by quadrant.
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/metrics.h"
#include "core/tensor.h"

namespace ts::rope_angle {

// Positions must stay below 2^24: F32 holds every integer up to there (and the bound above needs it).
inline constexpr int64_t kMaxPosition = int64_t{1} << 24;

// f_i = base^(-2i / rotary_dim), in double: the reference's frequency, and the source of G_i.
inline double inv_freq(double base, int64_t rotary_dim, int64_t i) {
  return std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(rotary_dim));
}

// [rotary_dim / 2, 2] U32: row i is (hi, lo) of G_i = round(2^64 * f_i / (2 pi)). A device reads it
// as words[2 i], words[2 i + 1]; it depends on the parameters only, never on positions.
std::vector<uint32_t> turn_words(double base, int64_t rotary_dim);

// Every positions[] value below 2^24 (the tensor is named in the error).
void check_positions(const Tensor& positions);

// The tolerance of a rotate-half RoPE whose angles come from positions as above, on inputs of at
// most x_max (the case's largest |x|); the derivation is in the .cpp and printed with the tolerance.
Tolerance tolerance(DType dt, double x_max);

}  // namespace ts::rope_angle
