// The decode GEMV's dot products, one work-group's worth: GM activation rows x NR weight rows, each row
// of k values. Shared by gemv_quant (dense decode) and moe_gemv (the experts): the decode of a row is
// quant.h's DQ32 (a GGUF kind, or dq32_plain for F32 / F16 / BF16 rows in the case dtype), so every
// kind has one dot product whoever calls it.
// The work-group's WG work-items take units of U 32-value chunks in turn (side by side: consecutive
// bytes), decode each in registers and keep GM x NR vector partial sums; a tree reduction in local
// memory finishes (OpenCL 1.2 has no subgroup reductions without cl_khr_subgroups).
// GPUs: WG 32-64, U 1. CPU drivers: WG 1, U a whole block (the unrolled sub-block loop folds each
// sub-block's offsets and shifts), the chunk loop one work-item's stream of its rows' bytes.
//   -DGM -DNR -DWG (a power of two) -DU (1 or QCHUNKS), the decode's -DDQ32 -DQBE -DQBB; -DQPLAIN for
//   plain rows (any k: the k % 32 tail is summed apart)
#include "quant.h"

#ifdef QPLAIN
#define ROW_BYTES(k) ((size_t)(k) * sizeof(st_t))
#else
#define ROW_BYTES(k) QROW_BYTES(k)
#endif

inline float hsum16(float16 v) {
  const float8 a = v.lo + v.hi;
  const float4 b = a.lo + a.hi;
  const float2 c = b.lo + b.hi;
  return c.x + c.y;
}

// On return red[i * NR + r][0] = x[i] . rows[r] (and red[j][1 ..] is scratch). Always inlined, so the
// pointer arrays become registers and the loops are the caller's own (a compiler that kept the call
// would spill the partial sums).
__attribute__((always_inline)) inline void gemv_dots(__global const st_t* x[GM], __global const uchar* rows[NR], int k,
                                                     __local float (*red)[WG]) {
  const int lid = get_local_id(0);
  float16 acc[GM][NR];
#pragma unroll
  for (int i = 0; i < GM; ++i)
#pragma unroll
    for (int r = 0; r < NR; ++r) acc[i][r] = (float16)(0.0f);
  for (int u = lid; u < k / 32 / U; u += WG) {
#pragma unroll
    for (int s = 0; s < U; ++s) {
      const int c = u * U + s;
      const int blk = U == QCHUNKS ? u : c / QCHUNKS, j = U == QCHUNKS ? s : c % QCHUNKS;
      float16 alo[GM], ahi[GM];
#pragma unroll
      for (int i = 0; i < GM; ++i) {
        alo[i] = LDN(16, x[i], c * 32);
        ahi[i] = LDN(16, x[i], c * 32 + 16);
      }
#pragma unroll
      for (int r = 0; r < NR; ++r) {
        float16 lo, hi;
        DQ32(rows[r], blk, j, &lo, &hi);
#pragma unroll
        for (int i = 0; i < GM; ++i) acc[i][r] = fma(alo[i], lo, fma(ahi[i], hi, acc[i][r]));
      }
    }
  }
  for (int i = 0; i < GM; ++i)
    for (int r = 0; r < NR; ++r) {
      float v = hsum16(acc[i][r]);
#ifdef QPLAIN
      for (int c = k / 32 * 32 + lid; c < k; c += WG) v = fma(LD(x[i], c), LD((__global const st_t*)rows[r], c), v);
#endif
      red[i * NR + r][lid] = v;
    }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s)
      for (int j = 0; j < GM * NR; ++j) red[j][lid] += red[j][lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
