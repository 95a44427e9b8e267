#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_quant for prefill: out[i, j] = sum_k a[i, k] * dequant(w)[j, k]. Each work group of TS x TS
// invocations computes a BM x BM output tile, each invocation an R x R block strided by TS (as
// gemm.comp). k advances in slabs of BK = 32 values (every kind's block is a multiple of 32, so a
// slab never ends inside a row): the slab's BM weight rows are decoded once into shared memory
// (two 16-value chunks per row, quant.glsl) and reused by the whole group, beside the activations'
// slab. Both stored k-major so the inner loop reads rows. 2 * 32 * 64 floats = 16 KiB of shared
// memory, the least every device has.
//
// KERNEL_MOE_GEMM (gemm_quant_moe_id): the same tiles per expert. Grid z walks the experts, y the
// row tiles up to max_per_expert, x the column tiles; the tile's rows are gathered through the
// expert's list ids[e, :tpe[e]] (pair t * top_k + s: activation row t when ne11 is 1, else the pair's
// own row; out row the pair), and a tile at or past tpe[e] does nothing, so slots past tpe[e] (stale
// ids) are never read. Plain F32 / F16 / BF16 stacks come through the same decoder (experts.glsl),
// their k tail zero-filled.
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
// n_off .. n_off + n of rows ldo wide. The MoE build: n rows per expert, and the routing below.
#include "quant_gemm_push.glsl"  // the push block p
#ifdef KERNEL_MOE_GEMM
BUF_IDX(3, ids)
BUF_IDX(4, tpe)
#endif

#define QUANT_BUF w
#include "experts.glsl"

shared float sa[BK][BM];
shared float sb[BK][BM];

const uint kNone = 0xffffffffu;
#define LOADS (BM * BK / (TS * TS))  // activation values each invocation loads per slab

// Row r of the tile whose first row is m0 (of `rows` valid): its activation row and its output row,
// kNone past the valid rows. Without the MoE build both are m0 + r.
void tile_row(uint m0, uint r, uint e, uint rows, out uint ra, out uint ro) {
  ra = ro = kNone;
  if (m0 + r >= rows) return;
#ifdef KERNEL_MOE_GEMM
  const uint pair = ids[e * p.max_per_expert + m0 + r];  // a listed slot: below tpe[e]
  ra = p.ne11 == 1u ? pair / p.top_k : pair;
  ro = pair;
#else
  ra = ro = m0 + r;
#endif
}

// The BM x BM tile of rows m0 .. (of `rows` valid) and columns n0 .., against expert e's weight rows
// (e 0 outside the MoE build). Each invocation's rows are found once per tile, into registers.
void tile(uint m0, uint n0, uint e, uint rows) {
  const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  const uint tid = ty * TS + tx;
  uint ga[LOADS], go[R], unused;
  for (uint i = 0u; i < LOADS; ++i) tile_row(m0, tid / BK + i * (TS * TS / BK), e, rows, ga[i], unused);
  for (uint i = 0u; i < R; ++i) tile_row(m0, ty + i * TS, e, rows, unused, go[i]);
  float acc[R][R];
  for (uint i = 0u; i < R; ++i)
    for (uint j = 0u; j < R; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < p.k; k0 += BK) {
    // Consecutive invocations load consecutive k of one activation row: coalesced.
    for (uint i = 0u; i < LOADS; ++i) {
      const uint r = tid / BK + i * (TS * TS / BK), c = tid % BK;
      float av = 0.0;  // an if, not ?:, so no out-of-range load is ever speculated
      if (ga[i] != kNone && k0 + c < p.k) av = ld(a[ga[i] * p.k + k0 + c]);
      sa[c][r] = av;
    }
    // One 16-value chunk per invocation: BM rows x 2 chunks.
    if (tid < BM * 2u) {
      const uint r = tid >> 1, half_ = tid & 1u, gn = n0 + r;
      float v[16];
      if (gn < p.n) weight_decode16(KIND, weight_row_base(KIND, e * p.n + gn, p.k), k0 / 16u + half_, p.k, v);
      else
        for (uint x = 0u; x < 16u; ++x) v[x] = 0.0;
      for (uint x = 0u; x < 16u; ++x) sb[half_ * 16u + x][r] = v[x];
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
    barrier();  // everyone is done with the slab before the next one (or the next tile) overwrites it
  }
  for (uint i = 0u; i < R; ++i) {
    if (go[i] == kNone) continue;
    for (uint j = 0u; j < R; ++j) {
      const uint gn = n0 + tx + j * TS;
      if (gn < p.n) o[go[i] * p.ldo + p.n_off + gn] = st(acc[i][j]);
    }
  }
}

void main() {
  const uint n0 = gl_WorkGroupID.x * BM;
#ifdef KERNEL_MOE_GEMM
  // tpe[e] is the same for the whole group, so the loops (and the barriers in tile) stay uniform.
  for (uint e = gl_WorkGroupID.z; e < p.experts; e += gl_NumWorkGroups.z) {
    const uint rows = min(tpe[e], p.max_per_expert);
    for (uint m0 = gl_WorkGroupID.y * BM; m0 < rows; m0 += gl_NumWorkGroups.y * BM) tile(m0, n0, e, rows);
  }
#else
  tile(gl_WorkGroupID.y * BM, n0, 0u, p.m);
#endif
}
