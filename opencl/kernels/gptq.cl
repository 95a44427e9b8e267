// gemm_gptq / gemm_awq for small m: out[m, n] = a[m, k] @ W (kernels/packed.h). A work-group of
// WC x KS work-items owns WC consecutive output columns: work-items side by side take consecutive
// columns (consecutive words of qweight, scales and qzeros), and the KS rows of the group split k
// (whole groups without act-order), summed through local memory at the end. Each weight is decoded
// once (s (q - z), q - z exact: codes.h; scaled before its products, as the reference: an infinite
// scale makes a column NaN where some q == z, where a group's scaled sum would give +-Inf) and used for
// all GM rows of a. GPTQ groups of whole qweight words load each word once for its 32 / BITS codes and
// the activations four at a time. Act-order (its groups in a random order of k) stages every group's
// scale and zero for the group's columns in local memory where they fit (-DACT_GROUPS), then walks whole
// words. GPUs: 32 x 8; CPU drivers: KS 1 (no reduction). AWQ on GPUs: gemm_awq_words below.
//   -DGM (= m, at most 8) -DWC -DKS and the options of packed.h
#include "codes.h"
#include "packed.h"
#ifndef WC
#define WC 1
#define KS 1
#endif

#ifndef AWQ
// acc[i] += a[i, kk] * s[c] (q - z[c]) for codes e + c (c < 4) of qweight word w (kk = w * PER + e + c).
inline void gptq_codes4(__global const st_t* a, int k, uint word, int w, int e, float4 s, float4 z, float* acc) {
  const float4 d = s * (float4)(fq((word >> (BITS * e)) & MASK, z.x), fq((word >> (BITS * (e + 1))) & MASK, z.y),
                                fq((word >> (BITS * (e + 2))) & MASK, z.z), fq((word >> (BITS * (e + 3))) & MASK, z.w));
#pragma unroll
  for (int i = 0; i < GM; ++i) {
    const float4 av = LD4(a, (size_t)i * k + w * PER + e);
    acc[i] = fma(av.w, d.w, fma(av.z, d.z, fma(av.y, d.y, fma(av.x, d.x, acc[i]))));
  }
}
// The PER codes of word w, one group's scale s and zero z.
inline void gptq_word(__global const st_t* a, int k, uint word, int w, float s, float z, float* acc) {
  for (int e = 0; e < PER; e += 4) gptq_codes4(a, k, word, w, e, (float4)(s), (float4)(z), acc);
}
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
#if defined(ACT) && defined(ACT_GROUPS)
  // Act-order visits the groups in a random order of k: every group's scale and zero for the group's
  // WC columns staged in local memory once (-DACT_GROUPS = k / group_size, where they fit), then
  // slices of whole qweight words, each word loaded once (four before any is used) and each code's
  // scale and zero looked up by its own g_idx.
  __local float act_s[ACT_GROUPS * WC], act_z[ACT_GROUPS * WC];
  for (int e = ly * WC + lx; e < ACT_GROUPS * WC; e += WC * KS) {
    const int g = e / WC, jj = min((int)get_group_id(0) * WC + e % WC, n - 1);
    act_s[e] = vload_half((size_t)g * n + jj, scales);
    act_z[e] = (float)PACKED_ZERO(qzeros, g, n, jj);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int words = k / PER, per_slice = (words + KS - 1) / KS;
  const int w0 = min(ly * per_slice, words), w1 = min(w0 + per_slice, words);
  for (int w = w0; w < w1; w += 4) {
    uint q[4];
    for (int t = 0; t < 4; ++t) q[t] = (uint)qweight[(size_t)min(w + t, w1 - 1) * n + j];
    for (int t = 0; t < min(4, w1 - w); ++t)
      for (int e = 0; e < PER; e += 4) {
        int g[4];
        vstore4(vload4(0, g_idx + (w + t) * PER + e), 0, g);  // four groups a load
        float sv[4], zv[4];
        for (int c = 0; c < 4; ++c) {
          const int at = g[c] * WC + lx;
          sv[c] = act_s[at];
          zv[c] = act_z[at];
        }
        gptq_codes4(a, k, q[t], w + t, e, vload4(0, sv), vload4(0, zv), acc);
      }
  }
#elif defined(ACT)
  for (int kk = ly; kk < k; kk += KS) {
    const float w = packed_weight(qweight, scales, qzeros, g_idx, n, group_size, kk, j);
#pragma unroll
    for (int i = 0; i < GM; ++i) acc[i] = fma(LD(a, (size_t)i * k + kk), w, acc[i]);
  }
#else
  // Whole groups per k-slice: uniform loops, a group's scale and zero read once.
  for (int g = ly; g < k / group_size; g += KS) {
    const float scale = vload_half((size_t)g * n + j, scales);
    const float zero = (float)PACKED_ZERO(qzeros, g, n, j);
#ifndef AWQ
    if (group_size % PER == 0) {  // whole words: four loaded before any is used
      const int w1 = (g + 1) * (group_size / PER);
      int w = g * (group_size / PER);
      for (; w + 4 <= w1; w += 4) {
        uint q[4];
        for (int t = 0; t < 4; ++t) q[t] = (uint)qweight[(size_t)(w + t) * n + j];
        for (int t = 0; t < 4; ++t) gptq_word(a, k, q[t], w + t, scale, zero, acc);
      }
      for (; w < w1; ++w) gptq_word(a, k, (uint)qweight[(size_t)w * n + j], w, scale, zero, acc);
    } else
#endif
    {
      for (int kk = g * group_size; kk < (g + 1) * group_size; ++kk) {
        const float d = scale * fq(PACKED_CODE(qweight, kk, n, j), zero);
#pragma unroll
        for (int i = 0; i < GM; ++i) acc[i] = fma(LD(a, (size_t)i * k + kk), d, acc[i]);
      }
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

#ifdef AWQ
// AWQ on GPUs: work-item x takes word column w, the eight columns one packed word holds, so each
// qweight word is loaded once (a column a work-item loads it once per column), four k rows' words
// before any is used; the KS rows of the group split k in whole groups; each weight scaled before its
// products, as gemm_packed. The rows meet through local memory one at a time
// (8 KiB at WC 8, KS 32). A word column past n / 8 reads the last one; its sums are dropped.
__kernel __attribute__((reqd_work_group_size(WC, KS, 1)))
void gemm_awq_words(__global const st_t* a, __global const int* qweight, __global const half* scales,
                    __global const int* qzeros, __global const int* g_idx, __global st_t* out, int n, int k,
                    int group_size) {
  __local float red[KS][WC * 8];
  const int lx = get_local_id(0), ly = get_local_id(1), words = n / 8;
  const int w = min((int)get_global_id(0), words - 1);
  const int groups = k / group_size, per_slice = (groups + KS - 1) / KS;
  const int g0 = min(ly * per_slice, groups), g1 = min(g0 + per_slice, groups);
  float8 acc[GM];
  for (int i = 0; i < GM; ++i) acc[i] = (float8)(0.0f);
  for (int g = g0; g < g1; ++g) {
    const float8 s = vload_half8(0, scales + (size_t)g * n + 8 * w);
    const float8 z = convert_float8(awq_codes8((uint)qzeros[(size_t)g * words + w]));
    const int k1 = (g + 1) * group_size;
    for (int kk = g * group_size; kk < k1; kk += 4) {
      uint q[4];
      for (int t = 0; t < 4; ++t) q[t] = (uint)qweight[(size_t)min(kk + t, k1 - 1) * words + w];
      const int steps = min(4, k1 - kk);
      for (int t = 0; t < steps; ++t) {
        const float8 d = s * fq8(awq_codes8(q[t]), z);
#pragma unroll
        for (int i = 0; i < GM; ++i) acc[i] = fma((float8)(LD(a, (size_t)i * k + kk + t)), d, acc[i]);
      }
    }
  }
  const int t = ly * WC + lx, col = (int)get_group_id(0) * WC * 8 + t;  // work-item t sums column t
  for (int i = 0; i < GM; ++i) {
    vstore8(acc[i], 0, &red[ly][lx * 8]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < WC * 8 && col < n) {
      float sum = red[0][t];
      for (int y = 1; y < KS; ++y) sum += red[y][t];
      ST(out, (size_t)i * n + col, sum);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
#endif
