#pragma once
// Row conversions between a float dtype and F32 (SIMD, runtime-dispatched), for kernels that work on
// F32 copies of their rows.
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "cpu/runtime/scratch.h"

namespace ts::cpu {

void to_f32(DType dt, const void* src, float* dst, int64_t n);
void from_f32(DType dt, const float* src, void* dst, int64_t n);  // rounds to nearest even

// A whole float tensor as F32 (attention's query rows, read many times).
inline ScratchVector<float> widen_all(const Tensor& t) {
  ScratchVector<float> v(static_cast<size_t>(t.numel()));
  to_f32(t.dtype(), t.data(), v.data(), t.numel());
  return v;
}

}  // namespace ts::cpu
