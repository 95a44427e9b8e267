// The GGUF block kinds, decoded 32 values at a time: the one place every quant kernel (dequantize,
// GEMV, tiled GEMM, the MoE experts) reads a block layout from. Layouts are ggml's (core/quant/formats.h).
//
// dq32_<kind>(row, blk, j, &lo, &hi) decodes the 32 values of chunk j of block blk of a row (lo: the
// first 16, hi: the next 16). 32 values are a legacy block (j = 0), or one of the 8 sub-blocks of a
// k-quant super-block, so every kind has the same unit of work. DQ32_AT(row, c, lo, hi) decodes
// values [32c, 32c + 32) of the row. A caller that unrolls j over a block lets the compiler fold each
// sub-block's offsets and shifts.
//
// Bit-exactness (ggml's dequantize_row_*): each product is of an f16 scale with small integers, at
// most 24 significant bits, exact in F32; what remains is one add or subtract. A contracted FMA gives
// the same bits (the product is exact either way), but contraction is turned off all the same so the
// decode never depends on the compiler's choice.
//
// Blocks are 18, 20, 34, 144, 176 or 210 bytes (core/kinds.inc), so they are read as bytes (vload16 on uchar needs
// byte alignment only). Every f16 field sits at an even offset of an even-sized block, so it is read
// with vload_half, which OpenCL 1.2 has without cl_khr_fp16.
//
// The planner selects one kind per program: -DDQ32=dq32_q4_k -DQBE=256 -DQBB=144 (values and bytes
// per block), so kernels call DQ32 and QROW_BYTES.
#pragma OPENCL FP_CONTRACT OFF
#include "kinds.h"  // QK_<KIND>_BYTES and each field's offset (core/kinds.inc)

#define QROW_BYTES(k) ((size_t)((k) / QBE) * QBB)
#define QCHUNKS (QBE / 32)  // 32-value chunks per block
#define DQ32_AT(row, c, lo, hi) DQ32((row), (c) / QCHUNKS, (c) % QCHUNKS, (lo), (hi))

inline float q_f16(__global const uchar* p) { return vload_half(0, (__global const half*)p); }

// Low and high nibbles of 16 bytes; q_nib4: the low (hi == 0) or high (hi == 1) ones.
inline float16 q_lo4(uchar16 b) { return convert_float16(b & (uchar16)(15)); }
inline float16 q_hi4(uchar16 b) { return convert_float16(b >> (uchar16)(4)); }
inline uchar16 q_nib4(uchar16 b, int hi) { return (b >> (uchar16)(4 * hi)) & (uchar16)(15); }

// Q4_0 {d, qs[16]}: d * (q - 8); value j < 16 in the low nibble of qs[j], j >= 16 in the high nibble.
inline void dq32_q4_0(__global const uchar* row, int blk, int j, float16* lo, float16* hi) {
  __global const uchar* b = row + (size_t)blk * QK_Q4_0_BYTES;
  const float d = q_f16(b + QK_Q4_0_D);
  const uchar16 qs = vload16(0, b + QK_Q4_0_QS);
  *lo = (q_lo4(qs) - 8.0f) * d;
  *hi = (q_hi4(qs) - 8.0f) * d;
}

// Q4_1 {d, m, qs[16]}: d * q + m, nibbles as Q4_0.
inline void dq32_q4_1(__global const uchar* row, int blk, int j, float16* lo, float16* hi) {
  __global const uchar* b = row + (size_t)blk * QK_Q4_1_BYTES;
  const float d = q_f16(b + QK_Q4_1_D), m = q_f16(b + QK_Q4_1_M);
  const uchar16 qs = vload16(0, b + QK_Q4_1_QS);
  *lo = q_lo4(qs) * d + m;
  *hi = q_hi4(qs) * d + m;
}

// Q8_0 {d, qs[32] int8}: d * q.
inline void dq32_q8_0(__global const uchar* row, int blk, int j, float16* lo, float16* hi) {
  __global const uchar* b = row + (size_t)blk * QK_Q8_0_BYTES;
  const float d = q_f16(b + QK_Q8_0_D);
  *lo = convert_float16(as_char16(vload16(0, b + QK_Q8_0_QS))) * d;
  *hi = convert_float16(as_char16(vload16(0, b + QK_Q8_0_QS + 16))) * d;
}

// The 6-bit scale and min of sub-block j (of 8) of a Q4_K / Q5_K block (ggml's get_scale_min_k4):
// sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins); 4-7 in the nibbles of bytes
// 8-11 plus the top 2 bits of bytes 0-3 / 4-7.
inline void q_scale_min_k4(int j, __global const uchar* s, float* sc, float* m) {
  if (j < 4) {
    *sc = (float)(s[j] & 63);
    *m = (float)(s[j + 4] & 63);
  } else {
    *sc = (float)((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4));
    *m = (float)((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

// Q4_K {d, dmin, scales[12], qs[128]}: sub-block j is d*sc_j * q - dmin*m_j; bytes 32*(j/2) .. of qs
// hold sub-block j in their low (j even) or high (j odd) nibbles.
inline void dq32_q4_k(__global const uchar* row, int blk, int j, float16* lo, float16* hi) {
  __global const uchar* b = row + (size_t)blk * QK_Q4_K_BYTES;
  float sc, mn;
  q_scale_min_k4(j, b + QK_Q4_K_SCALES, &sc, &mn);
  const float d1 = q_f16(b + QK_Q4_K_D) * sc, m1 = q_f16(b + QK_Q4_K_M) * mn;
  __global const uchar* q = b + QK_Q4_K_QS + 32 * (j / 2);
  const uchar16 q0 = vload16(0, q), q1 = vload16(1, q);
  const float16 v0 = convert_float16(q_nib4(q0, j & 1)), v1 = convert_float16(q_nib4(q1, j & 1));
  *lo = d1 * v0 - m1;
  *hi = d1 * v1 - m1;
}

// Q5_K {d, dmin, scales[12], qh[32], qs[128]}: as Q4_K with a fifth bit, bit j of qh[l], worth 16.
inline void dq32_q5_k(__global const uchar* row, int blk, int j, float16* lo, float16* hi) {
  __global const uchar* b = row + (size_t)blk * QK_Q5_K_BYTES;
  float sc, mn;
  q_scale_min_k4(j, b + QK_Q5_K_SCALES, &sc, &mn);
  const float d1 = q_f16(b + QK_Q5_K_D) * sc, m1 = q_f16(b + QK_Q5_K_M) * mn;
  __global const uchar* q = b + QK_Q5_K_QS + 32 * (j / 2);
  const uchar16 q0 = vload16(0, q), q1 = vload16(1, q);
  const uchar16 h0 = (vload16(0, b + QK_Q5_K_QH) >> (uchar16)(j)) & (uchar16)(1);
  const uchar16 h1 = (vload16(1, b + QK_Q5_K_QH) >> (uchar16)(j)) & (uchar16)(1);
  const float16 v0 = convert_float16(q_nib4(q0, j & 1) | (h0 << (uchar16)(4)));
  const float16 v1 = convert_float16(q_nib4(q1, j & 1) | (h1 << (uchar16)(4)));
  *lo = d1 * v0 - m1;
  *hi = d1 * v1 - m1;
}

// Q6_K {ql[128], qh[64], scales[16] int8, d}: two halves of 128 values; quarter t of a half takes
// the low (t < 2) or high nibbles of ql[32*(t&1) + l] and bits 2t, 2t+1 of qh[l], minus 32, times
// d * scales[2t + l/16] of that half.
inline void dq32_q6_k(__global const uchar* row, int blk, int j, float16* lo, float16* hi) {
  __global const uchar* b = row + (size_t)blk * QK_Q6_K_BYTES;
  const int h = j / 4, t = j % 4;
  __global const uchar* ql = b + QK_Q6_K_QS + 64 * h + 32 * (t & 1);
  __global const uchar* qh = b + QK_Q6_K_QH + 32 * h;
  __global const char* sc = (__global const char*)(b + QK_Q6_K_SCALES + 8 * h + 2 * t);
  const float d = q_f16(b + QK_Q6_K_D);
  const uchar16 l0 = vload16(0, ql), l1 = vload16(1, ql);
  const uchar16 h0 = (vload16(0, qh) >> (uchar16)(2 * t)) & (uchar16)(3);
  const uchar16 h1 = (vload16(1, qh) >> (uchar16)(2 * t)) & (uchar16)(3);
  const uchar16 n0 = q_nib4(l0, t >> 1), n1 = q_nib4(l1, t >> 1);
  const float16 v0 = convert_float16(convert_int16(n0 | (h0 << (uchar16)(4))) - 32);
  const float16 v1 = convert_float16(convert_int16(n1 | (h1 << (uchar16)(4))) - 32);
  *lo = (d * (float)sc[0]) * v0;
  *hi = (d * (float)sc[1]) * v1;
}

// Plain rows (F32 / F16 / BF16 experts, stored in the case dtype), read through the same interface so
// that one GEMV serves them: -DQPLAIN -DDQ32=dq32_plain -DQBE=32 -DQBB=(32 x the element size). A plain
// row need not hold whole chunks: callers sum the k % 32 tail apart (gemv_core.h).
inline void dq32_plain(__global const uchar* row, int blk, int j, float16* lo, float16* hi) {
  __global const st_t* p = (__global const st_t*)row + (size_t)blk * 32;
  *lo = LDN(16, p, 0);
  *hi = LDN(16, p, 16);
}
