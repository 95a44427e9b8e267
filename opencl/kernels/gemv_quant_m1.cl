// gemm_quant at m = 1 (decode) on GPUs: out[ocol0 + j] = a . dequant(w)[j], bound by the GGUF weight
// bytes; the OpenCL twin of vulkan/shaders/gemv_quant_m1.comp. A work-group owns R rows. Each row's
// packed quants are cut into 4-byte slots (a word of nibbles: 8 values; of int8: 4) and work-item t
// takes slots t, t + WG, ... of all R rows: neighbours read neighbouring words (a 32-wide warp one
// 128-byte line), every weight byte is loaded once, and a slot's activations serve all R rows. Nibbles
// and bytes become floats by the exponent trick (2^23 + q as float bits, minus 2^23: no integer-to-
// float conversion), and a block's scale multiplies a slot's sum once. A tree in local memory then
// sums each row (OpenCL 1.2 has no subgroup reductions without cl_khr_subgroups).
//   -DKIND=<name> -DKIND_<name> (a GGUF block kind: Q4_0, Q4_1, Q8_0, Q4_K, Q5_K or Q6_K) -DR (rows)
//   -DWG (a power of two). Block sizes and field offsets are core/kinds.inc's (kinds.h: QK_<KIND>_<FIELD>).
#include "codes.h"
#include "kinds.h"

#define KCAT2(a, b) a##b
#define KCAT(a, b) KCAT2(a, b)
#define KF(field) KCAT(KCAT(QK_, KIND), field)  // this kind's row of core/kinds.inc: KF(_BYTES), KF(_QS), ...
#define QBYTES KF(_BYTES)
#define QELEMS KF(_ELEMS)

// Four bytes at an even offset (every kind's fields are 2-byte aligned; Q4_1, Q4_K and Q5_K 4-byte).
inline uint qw(__global const uchar* p) {
#if defined(KIND_Q4_1) || defined(KIND_Q4_K) || defined(KIND_Q5_K)
  return *(__global const uint*)p;
#else
  const ushort2 h = vload2(0, (__global const ushort*)p);
  return (uint)h.x | ((uint)h.y << 16);
#endif
}

inline float qh16(__global const uchar* p) { return vload_half(0, (__global const half*)p); }


// The four bytes of `word` as exact floats, less `bias`.
inline float4 bytes4(uint word, float bias) {
  const uint4 b = ((uint4)(word) >> (uint4)(0, 8, 16, 24)) & (uint4)(0xffu);
  return as_float4((uint4)(0x4B000000u) | b) - (float4)(8388608.0f + bias);
}

inline float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// Slot s of `row` against its activations v0 (x0 ..) and v1 (x1 ..): as the Vulkan shader's slot_dot.
inline float slot_dot(__global const uchar* row, int s, float4 v0, float4 v1) {
#if defined(KIND_Q4_0) || defined(KIND_Q4_1)
  __global const uchar* b = row + (size_t)(s >> 2) * QBYTES;
  const uint q = qw(b + KF(_QS) + 4 * (s & 3));
#if defined(KIND_Q4_1)
  const float bias = 0.0f;  // Q4_1: d q + m
#else
  const float bias = 8.0f;  // Q4_0: d (q - 8)
#endif
  const float d = dot(bytes4(q & 0x0f0f0f0fu, bias), v0) + dot(bytes4((q >> 4) & 0x0f0f0f0fu, bias), v1);
#if defined(KIND_Q4_1)
  return fma(qh16(b + KF(_D)), d, qh16(b + KF(_M)) * (sum4(v0) + sum4(v1)));
#else
  return qh16(b + KF(_D)) * d;
#endif
#elif defined(KIND_Q8_0)
  __global const uchar* b = row + (size_t)(s >> 3) * QBYTES;
  const uint q = qw(b + KF(_QS) + 4 * (s & 7)) ^ 0x80808080u;  // each byte: its int8 value + 128
  return qh16(b + KF(_D)) * dot(bytes4(q, 128.0f), v0);
#elif defined(KIND_Q4_K) || defined(KIND_Q5_K)
  __global const uchar* b = row + (size_t)(s >> 5) * QBYTES;
  const int wi = s & 31, g = wi >> 3;
  const uint4 hdr = vload4(0, (__global const uint*)b);  // d, dmin, the 12 scale bytes (at KF(_D) = 0)
  const uint q = qw(b + KF(_QS) + 4 * wi);
  uint lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;
#if defined(KIND_Q5_K)
  const uint h = qw(b + KF(_QH) + 4 * (wi & 7));  // bit 2g (low) / 2g + 1 (high): the fifth bit
  lo |= ((h >> (2 * g)) & 0x01010101u) << 4;
  hi |= ((h >> (2 * g + 1)) & 0x01010101u) << 4;
#endif
  // get_scale_min_k4 for sub-blocks 2g, 2g + 1, four a word (see the Vulkan shader).
  const uint scw = g < 2 ? hdr.y & 0x3f3f3f3fu : (hdr.w & 0x0f0f0f0fu) | ((hdr.y >> 2) & 0x30303030u);
  const uint mnw = g < 2 ? hdr.z & 0x3f3f3f3fu : ((hdr.w >> 4) & 0x0f0f0f0fu) | ((hdr.z >> 2) & 0x30303030u);
  const uint at = 16u * (uint)(g & 1);
  const float sums = fq((scw >> at) & 0xffu, 0.0f) * dot(bytes4(lo, 0.0f), v0) +
                     fq((scw >> (at + 8u)) & 0xffu, 0.0f) * dot(bytes4(hi, 0.0f), v1);
  const float mins = fq((mnw >> at) & 0xffu, 0.0f) * sum4(v0) + fq((mnw >> (at + 8u)) & 0xffu, 0.0f) * sum4(v1);
  return qh16(b + KF(_D)) * sums - qh16(b + KF(_M)) * mins;
#else  // Q6_K {ql[128], qh[64], scales[16] int8, d}
  __global const uchar* b = row + (size_t)(s >> 5) * QBYTES;
  const int wi = s & 31, h = wi >> 4, r = (wi >> 3) & 1, i = wi & 7;
  const uint ql = qw(b + KF(_QS) + 64 * h + 32 * r + 4 * i);
  const uint qh = qw(b + KF(_QH) + 32 * h + 4 * i);
  const uint lo = (ql & 0x0f0f0f0fu) | (((qh >> (2 * r)) & 0x03030303u) << 4);
  const uint hi = ((ql >> 4) & 0x0f0f0f0fu) | (((qh >> (2 * r + 4)) & 0x03030303u) << 4);
  __global const uchar* sc = b + KF(_SCALES) + 8 * h + 2 * r + (i >> 2);
  const float s0 = fq(sc[0] ^ 0x80u, 128.0f), s1 = fq(sc[4] ^ 0x80u, 128.0f);  // int8 scales
  return qh16(b + KF(_D)) * (s0 * dot(bytes4(lo, 32.0f), v0) + s1 * dot(bytes4(hi, 32.0f), v1));
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_quant_m1(__global const st_t* a, __global const uchar* w, __global st_t* out, int n, int k, int ocol0) {
  __local float red[R][WG];
  const int lid = get_local_id(0), n0 = get_group_id(0) * R;
  const size_t row_bytes = (size_t)(k / QELEMS) * QBYTES;
#if defined(KIND_Q8_0)
  const int slots = k / 4;  // a slot: 4 int8 values
#else
  const int slots = k / 8;  // a slot: a word of 8 nibbles
#endif
  // Rows past n (last group) read row n - 1 again: no branch in the loop, results discarded.
  __global const uchar* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = w + (size_t)min(n0 + r, n - 1) * row_bytes;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int s = lid; s < slots; s += WG) {
    int x0, x1;
#if defined(KIND_Q4_0) || defined(KIND_Q4_1)
    x0 = (s >> 2) * 32 + 4 * (s & 3);
    x1 = x0 + 16;
#elif defined(KIND_Q8_0)
    x0 = (s >> 3) * 32 + 4 * (s & 7);
    x1 = x0;
#elif defined(KIND_Q4_K) || defined(KIND_Q5_K)
    x0 = (s >> 5) * 256 + 64 * ((s & 31) >> 3) + 4 * (s & 7);
    x1 = x0 + 32;
#else
    x0 = (s >> 5) * 256 + 128 * ((s & 31) >> 4) + 32 * ((s >> 3) & 1) + 4 * (s & 7);
    x1 = x0 + 64;
#endif
#if defined(KIND_Q8_0)
    const float4 v0 = LD4(a, x0), v1 = (float4)(0.0f);
#else
    const float4 v0 = LD4(a, x0), v1 = LD4(a, x1);
#endif
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] += slot_dot(rows[r], s, v0, v1);
  }
#pragma unroll
  for (int r = 0; r < R; ++r) red[r][lid] = acc[r];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s)
      for (int r = 0; r < R; ++r) red[r][lid] += red[r][lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid < R && n0 + lid < n) ST(out, ocol0 + n0 + lid, red[lid][0]);
}
