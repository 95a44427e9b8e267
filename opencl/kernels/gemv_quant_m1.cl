// gemm_quant at m = 1 (decode) on GPUs: out[ocol0 + j] = a . dequant(w)[j], bound by the GGUF weight
// bytes; the OpenCL twin of vulkan/shaders/gemv_quant_m1.comp. A work-group owns R rows. Each row's
// packed quants are cut into 16-byte chunks (four words of nibbles: 32 values; of int8: 16), every
// chunk inside one block and under one scale, and work-item t takes chunks t, t + WG, ... of all R
// rows. Each work-item issues its R chunks' loads (16 bytes each, one vector load where the kind keeps
// chunks 16-byte aligned: Q4_K, Q5_K) and their scales before it uses any, with no branch between
// them (a row past n reads row n - 1 again, its sum discarded): the bytes in flight a GPU's memory
// needs, as the read roof's stream has. Neighbours read neighbouring chunks of one row, every weight
// byte is loaded once, and a chunk's activations serve all R rows. Nibbles and bytes become floats by
// the exponent trick (2^23 + q as float bits, minus 2^23: no integer-to-float conversion), and a
// block's scale multiplies a chunk's sum once. A tree in local memory then sums each row (OpenCL 1.2
// has no subgroup reductions without cl_khr_subgroups).
//   -DQK (QuantKind: 0 Q4_0, 1 Q4_1, 2 Q8_0, 3 Q4_K, 4 Q5_K, 5 Q6_K) -DR (rows) -DWG (a power of two)

#define QBYTES (QK == 0 ? 18 : QK == 1 ? 20 : QK == 2 ? 34 : QK == 3 ? 144 : QK == 4 ? 176 : 210)
#define QELEMS (QK <= 2 ? 32 : 256)

// Sixteen bytes at an offset that is 16-byte aligned (Q4_K, Q5_K), 4-byte (Q4_1), else even: one
// vector load, four words, or five words shifted by a half word (`odd`: the offset is 2 mod 4).
inline uint4 chunk16(__global const uchar* p) {
#if QK == 3 || QK == 4
  return *(__global const uint4*)p;
#elif QK == 1
  return vload4(0, (__global const uint*)p);
#else
  const size_t at = (size_t)p;
  __global const uint* w = (__global const uint*)(at & ~(size_t)3);
  const uint4 lo = vload4(0, w);
  // The fifth word holds the last two bytes where the offset is 2 mod 4 (always inside the chunk's
  // own block); where it is 0 mod 4 the fourth is read again, never a word past the chunk.
  const uint4 hi = (uint4)(lo.yzw, w[3 + ((at >> 1) & 1)]);
  return (at & 2) == 0 ? lo : (lo >> 16) | (hi << 16);
#endif
}

inline float qh16(__global const uchar* p) { return vload_half(0, (__global const half*)p); }

// q (below 2^23) as an exact float, less `bias`.
inline float fq(uint q, float bias) { return as_float(0x4B000000u | q) - (8388608.0f + bias); }

// The four bytes of `word` as exact floats, less `bias`.
inline float4 bytes4(uint word, float bias) {
  const uint4 b = ((uint4)(word) >> (uint4)(0, 8, 16, 24)) & (uint4)(0xffu);
  return as_float4((uint4)(0x4B000000u) | b) - (float4)(8388608.0f + bias);
}

inline float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// The sixteen values of a run against their activations.
typedef struct { float4 v[4]; } run16;

inline float dot16(uint4 q, float bias, const run16* x) {
  return dot(bytes4(q.x, bias), x->v[0]) + dot(bytes4(q.y, bias), x->v[1]) + dot(bytes4(q.z, bias), x->v[2]) +
         dot(bytes4(q.w, bias), x->v[3]);
}

inline float sum16(const run16* x) { return sum4(x->v[0] + x->v[1] + x->v[2] + x->v[3]); }

// Chunk c of `row` against its activations x0 (the low nibbles' run) and x1 (the high ones'): as the
// Vulkan shader's chunk_dot.
inline float chunk_dot(__global const uchar* row, int c, const run16* x0, const run16* x1) {
#if QK == 0 || QK == 1
  __global const uchar* b = row + (size_t)c * QBYTES;
  const uint4 q = chunk16(b + (QK == 1 ? 4 : 2));
  const float bias = QK == 1 ? 0.0f : 8.0f;
  const float d = dot16(q & 0x0f0f0f0fu, bias, x0) + dot16((q >> 4) & 0x0f0f0f0fu, bias, x1);
#if QK == 1
  return fma(qh16(b), d, qh16(b + 2) * (sum16(x0) + sum16(x1)));
#else
  return qh16(b) * d;
#endif
#elif QK == 2
  __global const uchar* b = row + (size_t)(c >> 1) * 34;
  const uint4 q = chunk16(b + 2 + 16 * (c & 1)) ^ 0x80808080u;  // each byte: its int8 value + 128
  return qh16(b) * dot16(q, 128.0f, x0);
#elif QK == 3 || QK == 4
  __global const uchar* b = row + (size_t)(c >> 3) * QBYTES;
  const int ci = c & 7, g = ci >> 1;
  const uint4 hdr = *(__global const uint4*)b;  // d, dmin, the 12 scale bytes: one 16-byte load
  const uint4 q = chunk16(b + (QK == 4 ? 48 : 16) + 16 * ci);
  uint4 lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;
#if QK == 4
  const uint4 h = chunk16(b + 16 + 16 * (ci & 1));  // bit 2g (low) / 2g + 1 (high): the fifth bit
  lo |= ((h >> (uint)(2 * g)) & 0x01010101u) << 4;
  hi |= ((h >> (uint)(2 * g + 1)) & 0x01010101u) << 4;
#endif
  // get_scale_min_k4 for sub-blocks 2g, 2g + 1, four a word (see the Vulkan shader).
  const uint scw = g < 2 ? hdr.y & 0x3f3f3f3fu : (hdr.w & 0x0f0f0f0fu) | ((hdr.y >> 2) & 0x30303030u);
  const uint mnw = g < 2 ? hdr.z & 0x3f3f3f3fu : ((hdr.w >> 4) & 0x0f0f0f0fu) | ((hdr.z >> 2) & 0x30303030u);
  const uint at = 16u * (uint)(g & 1);
  const float2 dm = vload_half2(0, (__global const half*)b);  // d, dmin
  const float sums = fq((scw >> at) & 0xffu, 0.0f) * dot16(lo, 0.0f, x0) +
                     fq((scw >> (at + 8u)) & 0xffu, 0.0f) * dot16(hi, 0.0f, x1);
  const float mins = fq((mnw >> at) & 0xffu, 0.0f) * sum16(x0) + fq((mnw >> (at + 8u)) & 0xffu, 0.0f) * sum16(x1);
  return dm.x * sums - dm.y * mins;
#else  // Q6_K {ql[128], qh[64], scales[16] int8, d}
  __global const uchar* b = row + (size_t)(c >> 3) * 210;
  const int ci = c & 7, h = ci >> 2, r = (ci >> 1) & 1, l = 16 * (ci & 1);
  const uint4 ql = chunk16(b + 64 * h + 32 * r + l);
  const uint4 qh = chunk16(b + 128 + 32 * h + l);
  const uint4 lo = (ql & 0x0f0f0f0fu) | (((qh >> (uint)(2 * r)) & 0x03030303u) << 4);
  const uint4 hi = ((ql >> 4) & 0x0f0f0f0fu) | (((qh >> (uint)(2 * r + 4)) & 0x03030303u) << 4);
  __global const uchar* sc = b + 192 + 8 * h + 2 * r + (ci & 1);
  const float s0 = fq(sc[0] ^ 0x80u, 128.0f), s1 = fq(sc[4] ^ 0x80u, 128.0f);  // int8 scales
  return qh16(b + 208) * (s0 * dot16(lo, 32.0f, x0) + s1 * dot16(hi, 32.0f, x1));
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_quant_m1(__global const st_t* a, __global const uchar* w, __global st_t* out, int n, int k, int ocol0) {
  __local float red[R][WG];
  const int lid = get_local_id(0), n0 = get_group_id(0) * R;
  const size_t row_bytes = (size_t)(k / QELEMS) * QBYTES;
  const int chunks = QK == 2 ? k / 16 : k / 32;
  // Rows past n (last group) read row n - 1 again: no branch in the loop, results discarded.
  __global const uchar* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = w + (size_t)min(n0 + r, n - 1) * row_bytes;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  for (int c = lid; c < chunks; c += WG) {
    int x0, x1;  // the activation index of the chunk's low run and its high run (as the Vulkan shader)
#if QK == 0 || QK == 1
    x0 = 32 * c;
    x1 = x0 + 16;
#elif QK == 2
    x0 = 16 * c;
    x1 = x0;
#elif QK == 3 || QK == 4
    x0 = (c >> 3) * 256 + 64 * ((c & 7) >> 1) + 16 * (c & 1);
    x1 = x0 + 32;
#else
    x0 = (c >> 3) * 256 + 128 * ((c & 7) >> 2) + 32 * ((c >> 1) & 1) + 16 * (c & 1);
    x1 = x0 + 64;
#endif
    run16 v0, v1;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v0.v[j] = LD4(a, x0 + 4 * j);
      v1.v[j] = QK == 2 ? (float4)(0.0f) : LD4(a, x1 + 4 * j);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] += chunk_dot(rows[r], c, &v0, &v1);
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
