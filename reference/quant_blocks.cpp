// The GGUF block kinds, value by value: dequantizers and reference quantizers that give ggml's bits.
//
// Unlike the rest of the reference (plain loops in double), this file computes in float, in the order
// ggml computes: a block format is defined by ggml's code, and the quantizer's scale search compares
// float error sums, so only the same float operations in the same order write the same bytes as
// llama.cpp's quantizer (ggml-quants.c, quantize_row_*_ref, no importance matrix). It is compiled with
// the reference's flags (no FMA contraction, no fast-math), as ggml-base is for a baseline x86-64.
//
// The dequantizers are exact: every product is of a half-precision scale (11 significant bits) with
// small integers (a 6-bit sub-scale and a 5-bit quant, or an 8-bit signed scale and a 6-bit quant), at
// most 24 significant bits, so it is exact in float; what remains is at most one rounding of one add
// or subtract. Any backend that forms the same products and one final add gets the same bits, in any
// order and with or without FMA.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype.h"
#include "core/error.h"
#include "core/quant/formats.h"

namespace ts::quant {

namespace {

// Each kind's block bytes (core/kinds.inc), by which the row loops step.
constexpr int64_t kBytesQ4_0 = kind_row(QuantKind::Q4_0).block_bytes, kBytesQ4_1 = kind_row(QuantKind::Q4_1).block_bytes,
                  kBytesQ8_0 = kind_row(QuantKind::Q8_0).block_bytes, kBytesQ4_K = kind_row(QuantKind::Q4_K).block_bytes,
                  kBytesQ5_K = kind_row(QuantKind::Q5_K).block_bytes, kBytesQ6_K = kind_row(QuantKind::Q6_K).block_bytes;

// --- shared pieces -------------------------------------------------------------------------------

float load_f16(const uint8_t* p) { return f16_to_f32(static_cast<uint16_t>(p[0] | (p[1] << 8))); }

void store_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);  // round to nearest even, subnormals kept, as ggml's converter
  p[0] = static_cast<uint8_t>(h & 0xff);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// ggml's nearest_int: adding 1.5 * 2^23 puts the float's value, rounded to nearest even, in the low
// 23 bits of the sum's mantissa. For |v| < 2^22 that is lrintf(v); it is done the same way here so
// that values outside that range (ggml only asserts in debug builds) give ggml's integers too, and
// NaN gives a defined result rather than undefined behaviour.
int nearest_int(float v) {
  const float shifted = v + 12582912.0f;
  return static_cast<int>(f32_bits(shifted) & 0x007fffffu) - 0x00400000;
}

// The legacy kinds store `(int8_t)(v)`: C's conversion truncates toward zero. Inputs are finite
// (quantize's validation), so v is within int8's range in every use; the clamp only keeps a
// non-finite value from being undefined behaviour.
int truncate_to_int8(float v) {
  if (!(v > -129.0f && v < 128.0f)) return 0;
  return static_cast<int>(static_cast<int8_t>(v));
}

// The 6-bit scale and min of sub-block j (of 8) of a Q4_K / Q5_K block: 12 bytes hold 8 scales and 8
// mins. Bytes 0-3 hold scales 0-3 in their low 6 bits, bytes 4-7 mins 0-3; sub-blocks 4-7 keep their
// low 4 bits in the nibbles of bytes 8-11 (scale low, min high) and their top 2 bits in the top 2 bits
// of bytes 0-3 (scales) and 4-7 (mins).
void scale_min_k4(int j, const uint8_t* q, uint8_t& scale, uint8_t& min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// The inverse of scale_min_k4 for all 8 sub-blocks (in this order, since sub-blocks 4-7 OR their top
// bits into bytes that sub-blocks 0-3 wrote).
void pack_scale_min_k4(const uint8_t* ls, const uint8_t* lm, uint8_t* q) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      q[j] = ls[j];
      q[j + 4] = lm[j];
    } else {
      q[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      q[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      q[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below it counts as all zero.
constexpr float kGroupMaxEps = 1e-15f;

// make_qx_quants with rmse_type 1 and no importance weights (Q6_K's sub-blocks): signed levels in
// [-nmax, nmax-1], stored offset by nmax in L; returns the scale. Starts from the scale that maps the
// value of largest magnitude to -nmax, then tries 18 nearby ones, keeping the one whose least-squares
// fit (weights x^2) explains the most: sumlx^2 / suml2 largest.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
      const float w = x[i] * x[i];
      sumlx += w * x[i] * static_cast<float>(l);
      suml2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i)
        L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i]))));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// make_qkx2_quants (Q4_K / Q5_K sub-blocks): levels in [0, nmax] with a scale and a min, x ~ scale*L
// - the_min, min <= 0. Starts from the range [min(x, 0), max(x)], then for nstep+1 candidate inverse
// scales solves the weighted least-squares scale and min of the levels they give and keeps the one
// with the smallest weighted squared error (use_mad false: both k-quants here use squares).
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {  // the fit wants a positive offset: the format has none, refit the scale alone
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// --- Q4_0: {d f16, qs[16]}; value j of the block is d * (q_j - 8), q_j in the low nibble of qs[j]
// for j < 16 and in the high nibble of qs[j - 16] for j >= 16. --------------------------------------

void dequantize_q4_0(const uint8_t* y, float* out, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kBytesQ4_0, out += kQK) {
    const float d = load_f16(y);
    const uint8_t* qs = y + 2;
    for (int j = 0; j < 16; ++j) {
      out[j] = static_cast<float>((qs[j] & 0xF) - 8) * d;
      out[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
  }
}

void quantize_q4_0(const float* x, uint8_t* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, y += kBytesQ4_0) {
    // The value of largest magnitude (the first, on a tie) becomes level 0, i.e. -8 * d: its sign
    // decides the sign of d, so the other end of the range gets the 8th level that 4 bits leave over.
    float amax = 0, max = 0;
    for (int j = 0; j < kQK; ++j)
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    const float d = max / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_f16(y, d);
    uint8_t* qs = y + 2;
    for (int j = 0; j < 16; ++j) {
      // Levels are computed with the unrounded d, as ggml does; + 8.5 then truncation rounds half up.
      const float v0 = x[j] * id;
      const float v1 = x[j + 16] * id;
      const int q0 = std::min(15, truncate_to_int8(v0 + 8.5f));
      const int q1 = std::min(15, truncate_to_int8(v1 + 8.5f));
      qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

// --- Q4_1: {d f16, m f16, qs[16]}; value j is d * q_j + m, nibbles as Q4_0. ----------------------

void dequantize_q4_1(const uint8_t* y, float* out, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kBytesQ4_1, out += kQK) {
    const float d = load_f16(y);
    const float m = load_f16(y + 2);
    const uint8_t* qs = y + 4;
    for (int j = 0; j < 16; ++j) {
      out[j] = static_cast<float>(qs[j] & 0xF) * d + m;
      out[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
    }
  }
}

void quantize_q4_1(const float* x, uint8_t* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, y += kBytesQ4_1) {
    float min = std::numeric_limits<float>::max();
    float max = -std::numeric_limits<float>::max();
    for (int j = 0; j < kQK; ++j) {
      if (x[j] < min) min = x[j];
      if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / 15;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_f16(y, d);
    store_f16(y + 2, min);
    uint8_t* qs = y + 4;
    for (int j = 0; j < 16; ++j) {
      const float v0 = (x[j] - min) * id;
      const float v1 = (x[j + 16] - min) * id;
      const int q0 = std::min(15, truncate_to_int8(v0 + 0.5f));
      const int q1 = std::min(15, truncate_to_int8(v1 + 0.5f));
      qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

// --- Q8_0: {d f16, qs[32] int8}; value j is d * qs[j]. -------------------------------------------

void dequantize_q8_0(const uint8_t* y, float* out, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kBytesQ8_0, out += kQK) {
    const float d = load_f16(y);
    for (int j = 0; j < kQK; ++j) out[j] = static_cast<float>(static_cast<int8_t>(y[2 + j])) * d;
  }
}

void quantize_q8_0(const float* x, uint8_t* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, x += kQK, y += kBytesQ8_0) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_f16(y, d);
    // roundf: halves away from zero (unlike nearest_int's ties to even).
    for (int j = 0; j < kQK; ++j) y[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(truncate_to_int8(std::round(x[j] * id))));
  }
}

// --- Q4_K: {d f16, dmin f16, scales[12], qs[128]}; 8 sub-blocks of 32, sub-block s has a 6-bit
// scale sc_s and min m_s (scale_min_k4): value = d*sc_s * q - dmin*m_s. Each 32 bytes of qs hold two
// sub-blocks: the low nibbles sub-block 2k, the high nibbles sub-block 2k+1. --------------------------

void dequantize_q4_k(const uint8_t* y, float* out, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kBytesQ4_K) {
    const float d = load_f16(y);
    const float dmin = load_f16(y + 2);
    const uint8_t* scales = y + 4;
    const uint8_t* q = y + 16;
    for (int k = 0; k < 4; ++k, q += 32) {
      uint8_t sc, m;
      scale_min_k4(2 * k, scales, sc, m);
      const float d1 = d * sc, m1 = dmin * m;
      scale_min_k4(2 * k + 1, scales, sc, m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *out++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *out++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

// The shared part of the Q4_K and Q5_K reference quantizers: per sub-block a (scale, min) fit with
// make_qkx2_quants, the 6-bit sub-scales relative to the block's largest, then the levels recomputed
// against the scales as stored (f16 d and dmin times the 6-bit ones). Writes d, dmin and the 12 scale
// bytes at y; leaves the levels (0..nmax) in L.
void quantize_k_scale_min(const float* x, uint8_t* y, int nmax, float rmin, float rdelta, int nstep, uint8_t* L) {
  float scales[8], mins[8], weights[32];
  uint8_t Laux[32];
  float max_scale = 0, max_min = 0;  // scales are positive, as the min is taken out
  for (int j = 0; j < 8; ++j) {
    // Weights favour the large values of the sub-block: |x| plus its RMS.
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    // ggml stores nearest_int's result in a uint8_t before capping at 63 (a negative one wraps, then
    // caps): kept, as it decides the bytes.
    ls[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
    lm[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
  }
  pack_scale_min_k4(ls, lm, y + 4);
  store_f16(y, max_scale / 63.0f);
  store_f16(y + 2, max_min / 63.0f);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, y + 4, sc, m);
    const float d = load_f16(y) * sc;
    if (d == 0) continue;  // a zero scale keeps make_qkx2_quants's levels, as ggml does
    const float dm = load_f16(y + 2) * m;
    for (int i = 0; i < 32; ++i) {
      const int l = nearest_int((x[32 * j + i] + dm) / d);
      L[32 * j + i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    }
  }
}

void quantize_q4_k(const float* x, uint8_t* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K, y += kBytesQ4_K) {
    uint8_t L[kQK_K];
    quantize_k_scale_min(x, y, 15, -1.0f, 0.1f, 20, L);
    uint8_t* q = y + 16;
    for (int j = 0; j < kQK_K; j += 64, q += 32)
      for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
  }
}

// --- Q5_K: {d f16, dmin f16, scales[12], qh[32], qs[128]}; as Q4_K with a fifth bit per value:
// value l of sub-block s takes bit s of qh[l] as 16. ------------------------------------------------

void dequantize_q5_k(const uint8_t* y, float* out, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kBytesQ5_K) {
    const float d = load_f16(y);
    const float dmin = load_f16(y + 2);
    const uint8_t* scales = y + 4;
    const uint8_t* qh = y + 16;
    const uint8_t* ql = y + 48;
    for (int k = 0; k < 4; ++k, ql += 32) {
      uint8_t sc, m;
      scale_min_k4(2 * k, scales, sc, m);
      const float d1 = d * sc, m1 = dmin * m;
      scale_min_k4(2 * k + 1, scales, sc, m);
      const float d2 = d * sc, m2 = dmin * m;
      const uint8_t bit1 = static_cast<uint8_t>(1u << (2 * k)), bit2 = static_cast<uint8_t>(2u << (2 * k));
      for (int l = 0; l < 32; ++l) *out++ = d1 * static_cast<float>((ql[l] & 0xF) + ((qh[l] & bit1) ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *out++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & bit2) ? 16 : 0)) - m2;
    }
  }
}

void quantize_q5_k(const float* x, uint8_t* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K, y += kBytesQ5_K) {
    uint8_t L[kQK_K];
    quantize_k_scale_min(x, y, 31, -0.5f, 0.1f, 15, L);
    uint8_t* qh = y + 16;
    uint8_t* ql = y + 48;
    std::memset(qh, 0, 32);
    for (int k = 0; k < 4; ++k, ql += 32) {
      const int base = 64 * k;
      for (int j = 0; j < 32; ++j) {
        int l1 = L[base + j], l2 = L[base + j + 32];
        if (l1 > 15) {
          l1 -= 16;
          qh[j] |= static_cast<uint8_t>(1u << (2 * k));
        }
        if (l2 > 15) {
          l2 -= 16;
          qh[j] |= static_cast<uint8_t>(2u << (2 * k));
        }
        ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
    }
  }
}

// --- Q6_K: {ql[128], qh[64], scales[16] int8, d f16}; 16 sub-blocks of 16, value = d * sc_s * (q -
// 32), q 6 bits. Per half of 128 values: ql[l] low nibble is value l, high nibble value l+64;
// ql[l+32] low nibble value l+32, high nibble value l+96; qh[l] holds the top 2 bits of values l,
// l+32, l+64, l+96 in bit pairs 0, 2, 4, 6. ------------------------------------------------------------

void dequantize_q6_k(const uint8_t* y, float* out, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kBytesQ6_K) {
    const float d = load_f16(y + 208);
    const uint8_t* ql = y;
    const uint8_t* qh = y + 128;
    const int8_t* sc = reinterpret_cast<const int8_t*>(y + 192);
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, out += 128)
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        out[l] = d * sc[is] * static_cast<float>(q1);
        out[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
        out[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
        out[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
      }
  }
}

void quantize_q6_k(const float* x, uint8_t* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K, y += kBytesQ6_K) {
    int8_t L[kQK_K];
    float scales[16];
    // Per sub-block a signed scale; the block's d maps the one of largest magnitude to -128.
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
      scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
      const float abs_scale = std::fabs(scales[ib]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[ib];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {  // an all-zero block: every byte zero, d included
      std::memset(y, 0, kBytesQ6_K);
      continue;
    }
    const float iscale = -128.0f / max_scale;
    store_f16(y + 208, 1 / iscale);
    int8_t* sc = reinterpret_cast<int8_t*>(y + 192);
    for (int ib = 0; ib < 16; ++ib) sc[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < 16; ++j) {
      const float d = load_f16(y + 208) * sc[j];
      if (d == 0) continue;  // keeps make_qx_quants's levels, as ggml does
      for (int i = 0; i < 16; ++i) {
        const int l = std::max(-32, std::min(31, nearest_int(x[16 * j + i] / d)));
        L[16 * j + i] = static_cast<int8_t>(l + 32);
      }
    }
    uint8_t* ql = y;
    uint8_t* qh = y + 128;
    for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32)
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF, q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
        ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
        ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
        qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                     ((L[j + l + 96] >> 4) << 6));
      }
  }
}

// The table: one row per GGUF block kind, its sizes and scale offsets from core/kinds.inc.
constexpr Format row_format(QuantKind k, DequantizeRowFn dequantize, QuantizeRowFn quantize) {
  const QuantKindRow& r = kind_row(k);
  return {k, r.block_elems, r.block_bytes, dequantize, quantize, {r.d, r.m}};
}
constexpr Format kFormats[] = {
    row_format(QuantKind::Q4_0, dequantize_q4_0, quantize_q4_0),
    row_format(QuantKind::Q4_1, dequantize_q4_1, quantize_q4_1),
    row_format(QuantKind::Q8_0, dequantize_q8_0, quantize_q8_0),
    row_format(QuantKind::Q4_K, dequantize_q4_k, quantize_q4_k),
    row_format(QuantKind::Q5_K, dequantize_q5_k, quantize_q5_k),
    row_format(QuantKind::Q6_K, dequantize_q6_k, quantize_q6_k),
};
static_assert(std::size(kFormats) == TS_QUANT_FIRST_PLAIN, "a GGUF block kind of core/kinds.inc without its functions");

}  // namespace

const Format* format(QuantKind k) {
  for (const Format& f : kFormats)
    if (f.kind == k) return &f;
  return nullptr;
}

const Format& block_format(QuantKind k, const char* what) {
  const Format* f = format(k);
  if (!f) {
    std::string kinds;
    for (const Format& g : kFormats) kinds += fmt::format("{}{}", kinds.empty() ? "" : "|", enum_name(g.kind));
    fail("parameter '{}': {} is not a GGUF block kind (expected one of {})", what, enum_name(k), kinds);
  }
  return *f;
}

void check_row(const Format& f, int64_t n_cols, const char* what) {
  check(n_cols > 0 && n_cols % f.block_elems == 0,
        "parameter '{}': {} is not a positive multiple of {}'s block of {} values", what, n_cols,
        enum_name(f.kind), f.block_elems);
  // row_bytes must not overflow (a hostile case file may ask for any n_cols).
  check(n_cols / f.block_elems <= std::numeric_limits<int64_t>::max() / f.block_bytes,
        "parameter '{}': {} values of {} are more bytes than a tensor can hold", what, n_cols, enum_name(f.kind));
}

}  // namespace ts::quant
