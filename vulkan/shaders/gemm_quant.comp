#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_quant for prefill: out[i, j] = sum_k a[i, k] * dequant(w)[j, k]. Each work group of TS x TS
// invocations computes a BM x BM output tile, each invocation an R x R block strided by TS (as
// gemm.comp). k advances in slabs of BK = 32 values (every kind's block is a multiple of 32, so a
// slab never ends inside a row): the slab's BM weight rows are decoded once into shared memory
// (two 16-value chunks per row, quant.glsl) and reused by the whole group, beside the activations'
// slab. Both stored k-major so the inner loop reads rows. 2 * 32 * 64 floats = 16 KiB of shared
// memory, the least every device has.
#include "dtype.glsl"

#define TS 16u
#define R 4u
#define BM (TS * R)
#define BK 32u

layout(local_size_x = 16, local_size_y = 16) in;
layout(constant_id = 0) const uint KIND = 0;

BUF_IN(0, a)
layout(std430, binding = 1) readonly buffer Buf1 { uint w[]; };
BUF_OUT(2, o)
// w may be a window (or one part of a fused weight) of n rows: its outputs are columns
// n_off .. n_off + n of rows ldo wide.
layout(push_constant) uniform Push { uint m, n, k, ldo, n_off; } p;

#define QUANT_BUF w
#include "quant.glsl"

shared float sa[BK][BM];
shared float sb[BK][BM];

void main() {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint tid = ty * TS + tx;
  const uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BM;
  const uint row_bytes = quant_row_bytes(KIND, p.k);
  float acc[R][R];
  for (uint i = 0u; i < R; ++i)
    for (uint j = 0u; j < R; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < p.k; k0 += BK) {
    // Consecutive invocations load consecutive k of one activation row: coalesced.
    for (uint e = tid; e < BM * BK; e += TS * TS) {
      const uint r = e / BK, c = e % BK, gm = m0 + r;
      float av = 0.0;  // an if, not ?:, so no out-of-range load is ever speculated
      if (gm < p.m) av = ld(a[gm * p.k + k0 + c]);
      sa[c][r] = av;
    }
    // One 16-value chunk per invocation: BM rows x 2 chunks.
    if (tid < BM * 2u) {
      const uint r = tid >> 1, half_ = tid & 1u, gn = n0 + r;
      float v[16];
      if (gn < p.n) quant_decode16(KIND, gn * row_bytes, k0 / 16u + half_, v);
      else
        for (uint e = 0u; e < 16u; ++e) v[e] = 0.0;
      for (uint e = 0u; e < 16u; ++e) sb[half_ * 16u + e][r] = v[e];
    }
    barrier();  // the slab is complete before anyone reads it
    for (uint kk = 0u; kk < BK; ++kk) {
      float av[R], bv[R];
      for (uint i = 0u; i < R; ++i) {
        av[i] = sa[kk][ty + i * TS];
        bv[i] = sb[kk][tx + i * TS];
      }
      for (uint i = 0u; i < R; ++i)
        for (uint j = 0u; j < R; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();  // everyone is done with the slab before the next one overwrites it
  }
  for (uint i = 0u; i < R; ++i) {
    const uint gm = m0 + ty + i * TS;
    if (gm >= p.m) continue;
    for (uint j = 0u; j < R; ++j) {
      const uint gn = n0 + tx + j * TS;
      if (gn < p.n) o[gm * p.ldo + p.n_off + gn] = st(acc[i][j]);
    }
  }
}
