#pragma once
// Tolerances derived from error analysis, never tuned. The reference accumulates in double and rounds
// once to the output dtype; a backend accumulates in F32 and rounds once. So a backend's error is its
// F32 accumulation error plus at most one extra rounding of the output dtype:
//   |got - want| <= accumulation + u_out * |want| * 2        (u_out: unit roundoff of the output dtype)
// F32 accumulation over n terms of magnitude at most `mag` grows like sqrt(n) * u_f32 * mag for
// rounding errors that behave randomly (Higham, "Accuracy and Stability", 3.1); we allow a factor of 8
// over that, still orders of magnitude below any real indexing or formula bug.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/metrics.h"

namespace ts::tol {

// Data movement: every bit must survive.
inline Tolerance exact() { return {0, 0, "data movement: bit-exact"}; }

// Below the normal range error is absolute. For F16 outputs one subnormal step (2^-24) covers the two
// roundings: F16's subnormals start at 2^-14, within reach of activations, and F32 arithmetic carries
// them exactly. For F32 and BF16 outputs the floor is the smallest normal, 2^-126: every backend
// computes in F32, and F32 arithmetic is only relative down to there. Below it an intermediate
// underflows (exp(-g) overflows for g < -88.7, so silu(g) = g / (1 + exp(-g)) is 0 where the exact
// value is near -1e-43), and OpenCL 1.2 (without CL_FP_DENORM) and Vulkan (without
// shaderDenormPreserveFloat32) let a device flush F32 subnormals to zero.
inline double underflow_floor(DType out) {
  switch (out) {
    case DType::F16: return 0x1p-24;
    case DType::BF16:
    case DType::F32: return 0x1p-126;
    default: return 0;
  }
}

// A few float ops per element (activations, adds), each rounded in F32, then one output rounding
// (relative in the normal range, one subnormal step below it).
inline Tolerance elementwise(DType out, int ops = 4) {
  const double u32 = 0x1p-24;
  return {underflow_floor(out), 2 * unit_roundoff(out) + ops * u32,
          fmt::format("elementwise: 2 roundings of {} + {} F32 ops", dtype_name(out), ops)};
}

// A sum of n products whose terms are bounded by mag (e.g. |a||b| for a dot product), then one
// output rounding. Inputs are identical on both sides, so only arithmetic error counts. `mag` is the
// case's own bound, from its data (core/ops/magnitude.h), and `what` says what it was read from
// ("max|a| x max|w|"), so the printed derivation names what the tolerance depends on.
inline Tolerance accumulation(DType out, double n, double mag, const std::string& what, int extra_ops = 4) {
  const double u32 = 0x1p-24;
  const double atol = 8.0 * std::sqrt(std::max(n, 1.0)) * u32 * mag * std::sqrt(std::max(n, 1.0));
  return {atol, 2 * unit_roundoff(out) + extra_ops * u32,
          fmt::format("sum of {:.0f} terms of size <= {:.3g} ({}): 8*sqrt(n)*u32*(sqrt(n)*mag) abs + 2 u_{} rel",
                      n, mag, what, dtype_name(out))};
}

// A row normalisation (rms_norm, layer_norm, per-head norms): a sum of n squares accumulated in F32.
// Its terms are positive, so its relative error is that of the sum, 8*sqrt(n)*u32 as above; the square
// root halves it; then `ops` F32 ops per element and one output rounding. The error is relative to
// each output unless a shift is added after the scaling (layer_norm's beta): `mag` bounds the scaled
// value before that shift and turns the relative error into an absolute one (0 when there is none).
inline Tolerance row_norm(DType out, double n, double mag, int ops = 6) {
  const double u32 = 0x1p-24;
  const double rel = 0.5 * 8.0 * std::sqrt(std::max(n, 1.0)) * u32 + ops * u32;
  return {rel * mag + underflow_floor(out), 2 * unit_roundoff(out) + rel,
          fmt::format("row norm over {:.0f}: sum of squares 8*sqrt(n)*u32, halved by the sqrt, + {} F32 ops, "
                      "x {:.3g} before a shift; + 2 u_{}",
                      n, ops, mag, dtype_name(out))};
}

}  // namespace ts::tol
