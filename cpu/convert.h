#pragma once
// Row conversions between a float dtype and F32 (SIMD, runtime-dispatched), for kernels that work on
// F32 copies of their rows.
#include <cstdint>

#include "core/dtype.h"

namespace ts::cpu {

void to_f32(DType dt, const void* src, float* dst, int64_t n);
void from_f32(DType dt, const float* src, void* dst, int64_t n);  // rounds to nearest even

}  // namespace ts::cpu
