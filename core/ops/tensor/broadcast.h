#pragma once
// The index arithmetic of add and mul, written once: b [e0, e1, e2] broadcast against out [d0, d1, d2].
// Each e_i is d_i or 1, so b's element for out (i0, i1, i2) is b[i0 * s0 + i1 * s1 + i2 * s2] with
// s_i b's row-major stride along axis i, or 0 along an axis b has as 1. The reference, the cpu
// kernel and the device kernels (which take s0, s1, s2 as arguments) all index b this way.
#include <cstdint>

#include "core/ops/tensor_params.h"

namespace ts::bcast {

struct Strides {
  int64_t s0 = 0, s1 = 0, s2 = 0;
  int64_t at(int64_t i0, int64_t i1, int64_t i2) const { return i0 * s0 + i1 * s1 + i2 * s2; }
  // b's offset for the start of out's row (i0, i1); along the row b moves by s2 (1, or 0 when e2 is 1).
  int64_t row(int64_t i0, int64_t i1) const { return i0 * s0 + i1 * s1; }
};

// An axis where e_i == 1 gets stride 0 even when d_i is 1 too (nothing moves along it either way).
inline Strides strides(const BroadcastParams& p) {
  return {p.e0 == 1 ? 0 : p.e1 * p.e2, p.e1 == 1 ? 0 : p.e2, p.e2 == 1 ? 0 : 1};
}

}  // namespace ts::bcast
