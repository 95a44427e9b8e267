#pragma once
// One activation row quantized to int8 for the decode GEMV's integer dot (cpu/quant/quant_int8_dot-inl.h),
// filled once per call by QuantActivations (cpu/quant/quant_gemm.h). Two layouts: blocks of 32 for the
// kinds whose weight scales are per 32 (Q4_0, Q4_1, Q8_0), and blocks of 256 with one scale each for
// the K kinds, whose integer sums then run over a whole weight block before a single F32 multiply.

#include <cstdint>

namespace ts::cpu {

struct ActQ8 {
  const int8_t* q;    // k values
  // The same k values reordered for Q4_0 / Q4_1, whose dot reads two blocks of 32 per step: in each
  // group of 8 blocks (256 values from a multiple of 256), 16 values of block p and 16 of block p + 4
  // side by side, so one 32-byte load meets the codes of both (PairedSums8 in
  // cpu/quant/quant_int8_steps-inl.h); a
  // row's last k % 256 values stay in natural order.
  const int8_t* qp;
  const float* d;     // k / 32 scales
  const float* fs32;  // d[b] * sum of q over block b
  const float* fs16;  // d[j / 2] * sum of q over values 16 j .. 16 j + 15
};

// Where value l (< 32) of block j (< 8) of a full group lies in ActQ8::qp, from the group's start.
inline constexpr int64_t kPairGroup = 256;
constexpr int paired_at(int j, int l) { return 64 * (j & 3) + 32 * (l >> 4) + 16 * (j >> 2) + (l & 15); }

struct ActQ8K {
  const int8_t* q;      // k values
  const float* d;       // k / 256 scales
  const int16_t* bs16;  // sum of q over values 16 j .. 16 j + 15 (|sum| <= 16 * 127)
  const int16_t* bs32;  // sum of q over values 32 j .. 32 j + 31
};

}  // namespace ts::cpu
