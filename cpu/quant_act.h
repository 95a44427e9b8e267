#pragma once
// One activation row quantized to int8 for the decode GEMV's integer dot (cpu/quant_dot-inl.h),
// filled once per call by QuantActivations (cpu/quant_gemm.h).
#include <cstdint>

namespace ts::cpu {

struct ActQ8 {
  const int8_t* q;    // k values
  const float* d;     // k / 32 scales
  const float* fs32;  // d[b] * sum of q over block b
  const float* fs16;  // d[j / 2] * sum of q over values 16 j .. 16 j + 15
};

}  // namespace ts::cpu
