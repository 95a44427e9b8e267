// gemv_quant: out[m, n] = a[m, k] @ dequant(w)^T for small m (decode), w the GGUF rows of one kind:
// bandwidth-bound on w. A work-group of WG work-items owns R consecutive weight rows; its work-items
// take the 32-value chunks of those rows in turn (side by side: consecutive bytes), decode each in
// registers (kernels/quant.h), and keep GM x R vector partial sums; a work-group tree reduction in
// local memory finishes (OpenCL 1.2 has no subgroup reductions without cl_khr_subgroups).
// GPUs: WG 32-64. CPU drivers: WG 1, the chunk loop is one work-item's stream of its rows' bytes.
// out is written at out[i * ldo + ocol0 + row] (a column range of a wider output).
//   -DGM (= m, at most 8) -DR -DWG (a power of two) -DU (1 or QCHUNKS) -DDQ32 -DQBE -DQBB
#include "quant.h"

inline float hsum16(float16 v) {
  const float8 a = v.lo + v.hi;
  const float4 b = a.lo + a.hi;
  const float2 c = b.lo + b.hi;
  return c.x + c.y;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_quant(__global const st_t* a, __global const uchar* w, __global st_t* out, int n, int k, int ldo,
                int ocol0) {
  __local float red[GM * R][WG];
  const int lid = get_local_id(0);
  const int n0 = get_group_id(0) * R;
  const size_t row_bytes = QROW_BYTES(k);
  // Rows past n (last group) decode row n - 1 again: no branch in the loop, results discarded.
  __global const uchar* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = w + (size_t)min(n0 + r, n - 1) * row_bytes;

  float16 acc[GM][R];
#pragma unroll
  for (int i = 0; i < GM; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = (float16)(0.0f);
  // Work-items take units of U chunks in turn: U = 1 on GPUs (many work-items per row), a whole block
  // on CPU drivers (the unrolled sub-block loop folds each sub-block's offsets and shifts).
  for (int u = lid; u < k / 32 / U; u += WG) {
#pragma unroll
    for (int s = 0; s < U; ++s) {
      const int c = u * U + s;
      const int blk = U == QCHUNKS ? u : c / QCHUNKS, j = U == QCHUNKS ? s : c % QCHUNKS;
      float16 alo[GM], ahi[GM];
#pragma unroll
      for (int i = 0; i < GM; ++i) {
        alo[i] = LDN(16, a, (size_t)i * k + c * 32);
        ahi[i] = LDN(16, a, (size_t)i * k + c * 32 + 16);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float16 lo, hi;
        DQ32(rows[r], blk, j, &lo, &hi);
#pragma unroll
        for (int i = 0; i < GM; ++i) acc[i][r] = fma(alo[i], lo, fma(ahi[i], hi, acc[i][r]));
      }
    }
  }
  for (int i = 0; i < GM; ++i)
    for (int r = 0; r < R; ++r) red[i * R + r][lid] = hsum16(acc[i][r]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s)
      for (int j = 0; j < GM * R; ++j) red[j][lid] += red[j][lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int j = lid; j < GM * R; j += WG) {
    const int i = j / R, r = j % R;
    if (n0 + r < n) ST(out, (size_t)i * ldo + ocol0 + n0 + r, red[j][0]);
  }
}
