// gemm_gptq / gemm_awq for small m: out[m, n] = a[m, k] @ W (kernels/packed.h). One work-item per
// output column j: work-items side by side take consecutive columns, so their reads of qweight,
// scales and qzeros are consecutive words. Each weight is decoded once and used for all GM rows of a;
// without act-order a group's scale and zero are read once per group.
//   -DGM (= m, at most 8) and the options of packed.h
#include "packed.h"

__kernel void gemm_packed(__global const st_t* a, __global const int* qweight, __global const half* scales,
                          __global const int* qzeros, __global const int* g_idx, __global st_t* out, int n, int k,
                          int group_size) {
  const int j = get_global_id(0);
  if (j >= n) return;
  float acc[GM];
  for (int i = 0; i < GM; ++i) acc[i] = 0.0f;
#ifdef ACT
  for (int kk = 0; kk < k; ++kk) {
    const float w = packed_weight(qweight, scales, qzeros, g_idx, n, group_size, kk, j);
#pragma unroll
    for (int i = 0; i < GM; ++i) acc[i] = fma(LD(a, (size_t)i * k + kk), w, acc[i]);
  }
#else
  // Groups in order: uniform loops, no per-k lookup of the scale and zero.
  for (int g = 0; g < k / group_size; ++g) {
    const float scale = vload_half((size_t)g * n + j, scales);
    const int zero = PACKED_ZERO(qzeros, g, n, j);
    for (int kk = g * group_size; kk < (g + 1) * group_size; ++kk) {
      const float w = scale * (float)((int)PACKED_CODE(qweight, kk, n, j) - zero);
#pragma unroll
      for (int i = 0; i < GM; ++i) acc[i] = fma(LD(a, (size_t)i * k + kk), w, acc[i]);
    }
  }
#endif
  for (int i = 0; i < GM; ++i) ST(out, (size_t)i * n + j, acc[i]);
}
