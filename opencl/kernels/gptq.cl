// gemm_gptq / gemm_awq for small m: out[m, n] = a[m, k] @ W (kernels/packed.h). A work-group of
// WC x KS work-items owns WC consecutive output columns: work-items side by side take consecutive
// columns (consecutive words of qweight, scales and qzeros), and the KS rows of the group split k
// (whole groups without act-order), summed through local memory at the end. Each weight is decoded
// once and used for all GM rows of a. GPUs: 32 x 8; CPU drivers: KS 1 (no reduction).
//   -DGM (= m, at most 8) -DWC -DKS and the options of packed.h
#include "packed.h"
#ifndef WC
#define WC 1
#define KS 1
#endif

__kernel __attribute__((reqd_work_group_size(WC, KS, 1)))
void gemm_packed(__global const st_t* a, __global const int* qweight, __global const half* scales,
                 __global const int* qzeros, __global const int* g_idx, __global st_t* out, int n, int k,
                 int group_size) {
  __local float red[GM][KS][WC];
  const int lx = get_local_id(0), ly = get_local_id(1);
  // Columns past n (last group) read column n - 1 again; their sums are discarded.
  const int j = min((int)get_global_id(0), n - 1);
  float acc[GM];
  for (int i = 0; i < GM; ++i) acc[i] = 0.0f;
#ifdef ACT
  for (int kk = ly; kk < k; kk += KS) {
    const float w = packed_weight(qweight, scales, qzeros, g_idx, n, group_size, kk, j);
#pragma unroll
    for (int i = 0; i < GM; ++i) acc[i] = fma(LD(a, (size_t)i * k + kk), w, acc[i]);
  }
#else
  // Whole groups per k-slice: uniform loops, a group's scale and zero read once.
  for (int g = ly; g < k / group_size; g += KS) {
    const float scale = vload_half((size_t)g * n + j, scales);
    const int zero = PACKED_ZERO(qzeros, g, n, j);
    for (int kk = g * group_size; kk < (g + 1) * group_size; ++kk) {
      const float w = scale * (float)((int)PACKED_CODE(qweight, kk, n, j) - zero);
#pragma unroll
      for (int i = 0; i < GM; ++i) acc[i] = fma(LD(a, (size_t)i * k + kk), w, acc[i]);
    }
  }
#endif
  for (int i = 0; i < GM; ++i) red[i][ly][lx] = acc[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (ly == 0 && get_global_id(0) < n) {
    for (int i = 0; i < GM; ++i) {
      float s = red[i][0][lx];
      for (int q = 1; q < KS; ++q) s += red[i][q][lx];
      ST(out, (size_t)i * n + j, s);
    }
  }
}

// CPU drivers (n % 8 == 0): one work-item per 8 consecutive columns, in 8-wide vector code (PoCL does
// not vectorize the column-per-work-item kernel across work-items well).
__kernel void gemm_packed_cols8(__global const st_t* a, __global const int* qweight, __global const half* scales,
                                __global const int* qzeros, __global const int* g_idx, __global st_t* out, int n,
                                int k, int group_size) {
  const int j0 = get_global_id(0) * 8;
  if (j0 >= n) return;
  float8 acc[GM];
  for (int i = 0; i < GM; ++i) acc[i] = (float8)(0.0f);
  int g_prev = -1;
  float8 scale = (float8)(0.0f), zero = (float8)(0.0f);
  for (int kk = 0; kk < k; ++kk) {
    const int g = PACKED_GROUP(g_idx, kk, group_size);
    if (g != g_prev) {  // once per group without act-order
      float z[8];
      for (int c = 0; c < 8; ++c) z[c] = (float)PACKED_ZERO(qzeros, g, n, j0 + c);
      zero = vload8(0, z);
      scale = vload_half8(0, scales + (size_t)g * n + j0);
      g_prev = g;
    }
    const float8 w = scale * (convert_float8(PACKED_CODES8(qweight, kk, n, j0)) - zero);
#pragma unroll
    for (int i = 0; i < GM; ++i) acc[i] = fma((float8)(LD(a, (size_t)i * k + kk)), w, acc[i]);
  }
  for (int i = 0; i < GM; ++i) STN(8, out, (size_t)i * n + j0, acc[i]);
}
