// GGUF block decoding, one place for every quant shader (dequantize, GEMV, GEMM, MoE): the values of
// a weight row come out in chunks of 16 consecutive values, the unit every kind shares (a chunk never
// straddles a block, and within a chunk one scale and one min apply). The arithmetic is ggml's
// (reference/quant_blocks.cpp), `precise` where a fused multiply-add would change the bits, so the
// dequantize op is bit-exact.
//
// The weights are the raw GGUF bytes bound as uint[] (blocks of 18, 20, 34, 144, 176 or 210 bytes, core/kinds.inc's,
// are not word aligned, and 8-bit storage is not a feature every device has): the includer declares
// the buffer and defines QUANT_BUF to its name (or QUANT_WORD(i) to an expression giving word i, to
// read from one of several buffers: the MoE kernels' gate and up stacks). Every multi-byte field sits at an even offset, so an
// f16 is one half of one word. `kind` is the QuantKind number (core/kinds.h); shaders take it as a
// specialization constant, so the driver folds the branches of the other kinds away.

#include "kinds.glsl"  // QK_<KIND>, QK_<KIND>_<FIELD> offsets, quant_block_elems / _bytes (core/kinds.inc)

#ifndef QUANT_WORD
#define QUANT_WORD(i) QUANT_BUF[i]
#endif

uint quant_row_bytes(uint kind, uint n_cols) { return n_cols / quant_block_elems(kind) * quant_block_bytes(kind); }

uint qbyte(uint off) { return (QUANT_WORD(off >> 2) >> ((off & 3u) * 8u)) & 0xffu; }

float qhalf(uint off) { return unpackHalf2x16(QUANT_WORD(off >> 2) >> ((off & 2u) * 8u)).x; }

// Four bytes from an even offset, little-endian.
uint qword(uint off) {
  const uint i = off >> 2;
  if ((off & 2u) == 0u) return QUANT_WORD(i);
  return (QUANT_WORD(i) >> 16) | (QUANT_WORD(i + 1u) << 16);
}

// Sixteen bytes from an even offset.
void qbytes16(uint off, out uint q[4]) {
  for (uint i = 0u; i < 4u; ++i) q[i] = qword(off + 4u * i);
}

uint qb(uint q[4], uint j) { return (q[j >> 2] >> (8u * (j & 3u))) & 0xffu; }

int sext8(uint b) { return int(b << 24) >> 24; }

// ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j from the 12 packed bytes at `off`.
void scale_min_k4(uint off, uint j, out uint sc, out uint mn) {
  if (j < 4u) {
    sc = qbyte(off + j) & 63u;
    mn = qbyte(off + j + 4u) & 63u;
  } else {
    sc = (qbyte(off + j + 4u) & 0xfu) | ((qbyte(off + j - 4u) >> 6) << 4);
    mn = (qbyte(off + j + 4u) >> 4) | ((qbyte(off + j) >> 6) << 4);
  }
}

// Values 16c .. 16c + 15 of the row starting at byte `row`.
void quant_decode16(uint kind, uint row, uint c, out float v[16]) {
  uint q[4];
  if (kind == QK_Q4_0 || kind == QK_Q4_1) {
    // {d, [m], qs[16]}: values 0-15 in the low nibbles, 16-31 in the high ones.
    const uint base = row + (c >> 1) * quant_block_bytes(kind);
    const float d = qhalf(base + (kind == QK_Q4_1 ? QK_Q4_1_D : QK_Q4_0_D));
    const float m = kind == QK_Q4_1 ? qhalf(base + QK_Q4_1_M) : 0.0;
    qbytes16(base + (kind == QK_Q4_1 ? QK_Q4_1_QS : QK_Q4_0_QS), q);
    const uint shift = (c & 1u) * 4u;
    for (uint j = 0u; j < 16u; ++j) {
      const uint x = (qb(q, j) >> shift) & 0xfu;
      precise float r;
      if (kind == QK_Q4_0) r = float(int(x) - 8) * d;
      else r = float(x) * d + m;
      v[j] = r;
    }
  } else if (kind == QK_Q8_0) {
    const uint base = row + (c >> 1) * QK_Q8_0_BYTES;
    const float d = qhalf(base + QK_Q8_0_D);
    qbytes16(base + QK_Q8_0_QS + (c & 1u) * 16u, q);
    for (uint j = 0u; j < 16u; ++j) v[j] = float(sext8(qb(q, j))) * d;
  } else if (kind == QK_Q4_K || kind == QK_Q5_K) {
    // Four groups of 64 values; each is 32 bytes of nibbles (low: sub-block 2g, high: 2g + 1) and,
    // for Q5_K, bit 2g / 2g + 1 of the 32 qh bytes as the fifth bit.
    const bool five = kind == QK_Q5_K;
    // Q4_K and Q5_K share d, dmin and scales' offsets; their qs differ (Q5_K's qh comes first).
    const uint base = row + (c >> 4) * (five ? QK_Q5_K_BYTES : QK_Q4_K_BYTES);
    const uint r = c & 15u, g = r >> 2, hi = (r >> 1) & 1u, lo = (r & 1u) * 16u;
    uint sc, mn;
    scale_min_k4(base + QK_Q4_K_SCALES, 2u * g + hi, sc, mn);
    precise float d1 = qhalf(base + QK_Q4_K_D) * float(sc);
    precise float m1 = qhalf(base + QK_Q4_K_M) * float(mn);
    qbytes16(base + (five ? QK_Q5_K_QS : QK_Q4_K_QS) + 32u * g + lo, q);
    uint h[4];
    if (five) qbytes16(base + QK_Q5_K_QH + lo, h);
    const uint hbit = 1u << (2u * g + hi);
    for (uint j = 0u; j < 16u; ++j) {
      uint x = (qb(q, j) >> (4u * hi)) & 0xfu;
      if (five && (qb(h, j) & hbit) != 0u) x += 16u;
      precise float val = d1 * float(x) - m1;
      v[j] = val;
    }
  } else {
    // Q6_K {ql[128], qh[64], scales[16] int8, d}: two halves of 128 values; in a half, value
    // l + 32i (l < 32) takes the low (i = 0, 1) or high (i = 2, 3) nibble of ql[l + 32 (i & 1)] and
    // bits 2i, 2i + 1 of qh[l], with scale l / 16 + 2i.
    const uint base = row + (c >> 4) * QK_Q6_K_BYTES;
    const uint r = c & 15u, half_ = r >> 3, i = (r & 7u) >> 1, lo = (r & 1u) * 16u;
    const float d = qhalf(base + QK_Q6_K_D);
    const int sc = sext8(qbyte(base + QK_Q6_K_SCALES + 8u * half_ + (r & 1u) + 2u * i));
    precise float ds = d * float(sc);
    uint h[4];
    qbytes16(base + QK_Q6_K_QS + 64u * half_ + 32u * (i & 1u) + lo, q);
    qbytes16(base + QK_Q6_K_QH + 32u * half_ + lo, h);
    for (uint j = 0u; j < 16u; ++j) {
      const uint x = ((qb(q, j) >> (4u * (i >> 1))) & 0xfu) | (((qb(h, j) >> (2u * i)) & 3u) << 4);
      precise float val = ds * float(int(x) - 32);
      v[j] = val;
    }
  }
}
