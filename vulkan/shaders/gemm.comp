#version 450
#extension GL_GOOGLE_include_directive : require
// out[m, n] = sum_k a[m, k] * b[n, k]. Each work group of TS x TS invocations computes a BM x BM
// output tile; each invocation an R x R block strided by TS, so neighbouring invocations read
// neighbouring shared words and write neighbouring columns. k advances in steps of BK through shared
// memory, both operands stored k-major there so the inner loop reads rows.
#include "dtype.glsl"

#ifndef TS
#define TS 16
#endif
#ifndef R
#define R 8
#endif
#define BM (TS * R)
#define BK 16

layout(local_size_x = TS, local_size_y = TS) in;
BUF_IN(0, a)
BUF_IN(1, b)
BUF_OUT(2, o)
#ifdef KERNEL_GEMM_TILED_BIAS
BUF_IN(3, bias)  // linear_3d_bias: bias[column] joins each F32 result before its one rounding
#define OUT_VALUE(col, v) ((v) + ld(bias[col]))
#else
#define OUT_VALUE(col, v) (v)
#endif
// b may be a window of n rows: its outputs are columns n_off .. n_off + n of rows ldo wide.
layout(push_constant) uniform Push { uint m, n, k, ldo, n_off; } p;

shared float sa[BK][BM];
shared float sb[BK][BM];

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint tid = ty * TS + tx;
  const uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BM;
  float acc[R][R];
  for (uint i = 0; i < R; ++i)
    for (uint j = 0; j < R; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    // Consecutive invocations load consecutive k of one row: coalesced along the contiguous dim.
    for (uint e = tid; e < BM * BK; e += TS * TS) {
      const uint r = e / BK, c = e % BK, gk = k0 + c;
      const uint gm = m0 + r, gn = n0 + r;
      float av = 0.0, bv = 0.0;  // ifs, not ?:, so no out-of-range load is ever speculated
      if (gm < p.m && gk < p.k) av = ld(a[gm * p.k + gk]);
      if (gn < p.n && gk < p.k) bv = ld(b[gn * p.k + gk]);
      sa[c][r] = av;
      sb[c][r] = bv;
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {
      float av[R], bv[R];
      for (uint i = 0; i < R; ++i) {
        av[i] = sa[kk][ty + i * TS];
        bv[i] = sb[kk][tx + i * TS];
      }
      for (uint i = 0; i < R; ++i)
        for (uint j = 0; j < R; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }
  for (uint i = 0; i < R; ++i) {
    const uint gm = m0 + ty + i * TS;
    if (gm >= p.m) continue;
    for (uint j = 0; j < R; ++j) {
      const uint gn = n0 + tx + j * TS;
      if (gn < p.n) o[gm * p.ldo + p.n_off + gn] = st(OUT_VALUE(p.n_off + gn, acc[i][j]));
    }
  }
}
