#pragma once
// The integer packings of GPTQ and AWQ checkpoints, decoded one value at a time: the reference and the
// checkpoint importer read them here, and every backend's kernels follow the same bit positions.
//
// AutoGPTQ ("gptq" format), bits b in {4, 8}, p = 32 / b values per int32:
//   qweight I32 [k / p, n]: value (k, j) sits in qweight[k / p, j] at bit b * (k % p)  (packed along k)
//   qzeros  I32 [G, n / p]: zero (g, j) sits in qzeros[g, j / p] at bit b * (j % p)    (packed along n),
//                           stored minus one: the stored field plus one is the zero, so a field of all
//                           ones decodes as 2^b, as AutoGPTQ's and vLLM's readers decode it.
// AutoAWQ (GEMM format), 4 bits, packed along n in the order 0 2 4 6 1 3 5 7:
//   qweight I32 [k, n / 8]: value (k, j) sits in qweight[k, j / 8] at bit 4 * kAwqSlot[j % 8]
//   qzeros  I32 [G, n / 8]: zero (g, j) likewise in qzeros[g, j / 8], stored as is.
// Both dequantize as W[k, j] = scales[g, j] * (q - zero), g the group of row k.
#include <cstdint>

namespace ts::quant {

// Nibble slot of column j % 8 within an AWQ int32: AutoAWQ packs columns 0 2 4 6 1 3 5 7 into slots
// 0..7, so column c sits in slot kAwqSlot[c].
inline constexpr int kAwqSlot[8] = {0, 4, 1, 5, 2, 6, 3, 7};

inline uint32_t field(int32_t word, int shift, int64_t bits) {
  return (static_cast<uint32_t>(word) >> shift) & ((1u << bits) - 1u);
}

inline uint32_t gptq_code(const int32_t* qweight, int64_t n, int64_t bits, int64_t k, int64_t j) {
  const int64_t per = 32 / bits;
  return field(qweight[(k / per) * n + j], static_cast<int>(bits * (k % per)), bits);
}
inline int64_t gptq_zero(const int32_t* qzeros, int64_t n, int64_t bits, int64_t g, int64_t j) {
  const int64_t per = 32 / bits;
  return static_cast<int64_t>(field(qzeros[g * (n / per) + j / per], static_cast<int>(bits * (j % per)), bits)) + 1;
}

inline uint32_t awq_code(const int32_t* qweight, int64_t n, int64_t k, int64_t j) {
  return field(qweight[k * (n / 8) + j / 8], 4 * kAwqSlot[j % 8], 4);
}
inline int64_t awq_zero(const int32_t* qzeros, int64_t n, int64_t g, int64_t j) {
  return field(qzeros[g * (n / 8) + j / 8], 4 * kAwqSlot[j % 8], 4);
}

}  // namespace ts::quant
