// gemm_gptq / gemm_awq for small m: out[m, n] = a[m, k] @ W (kernels/packed.h). One work-item per
// output column j and block of GM rows of a: work-items side by side take consecutive columns, so
// their reads of qweight, scales and qzeros are consecutive words. Each weight is decoded once per
// work-item and used for its GM rows; a group's scale and zero are read once per group.
//   -DGM (rows of a per work-item) and the options of packed.h
#include "packed.h"

__kernel void gemm_packed(__global const st_t* a, __global const int* qweight, __global const half* scales,
                          __global const int* qzeros, __global const int* g_idx, __global st_t* out, int m, int n,
                          int k, int group_size) {
  const int j = get_global_id(0), i0 = get_global_id(1) * GM;
  if (j >= n) return;
  const int rows = min(GM, m - i0);
  float acc[GM];
  for (int i = 0; i < GM; ++i) acc[i] = 0.0f;
  int g_prev = -1;
  float scale = 0.0f;
  int zero = 0;
  for (int kk = 0; kk < k; ++kk) {
    const int g = PACKED_GROUP(g_idx, kk, group_size);
    if (g != g_prev) {
      scale = vload_half((size_t)g * n + j, scales);
      zero = PACKED_ZERO(qzeros, g, n, j);
      g_prev = g;
    }
    const float w = scale * (float)((int)PACKED_CODE(qweight, kk, n, j) - zero);
    for (int i = 0; i < GM; ++i)
      if (i < rows) acc[i] = fma(LD(a, (size_t)(i0 + i) * k + kk), w, acc[i]);
  }
  for (int i = 0; i < rows; ++i) ST(out, (size_t)(i0 + i) * n + j, acc[i]);
}
