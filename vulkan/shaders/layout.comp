#version 450
#extension GL_GOOGLE_include_directive : require
// Data movement, element for element (no conversion, so copies are bit-exact):
//   KERNEL_LAYOUT_COPY       a 3-D strided copy: dst[do + i0 ds0 + i1 ds1 + i2] = src[so + i0 ss0 + i1 ss1 + i2]
//                            (transposes, splits, slices, cache appends)
//   KERNEL_LAYOUT_APPEND_AT  the same with do += rows[item] * row_stride, the row read on the device
//                            (per-sequence cache lengths); rows at or past row_limit are not written
//   KERNEL_LAYOUT_GATHER     dst[r, c] = src[ids[r], c] (embedding rows)
#include "dtype.glsl"

#define WG 256
layout(local_size_x = WG) in;

#if defined(KERNEL_LAYOUT_GATHER)
BUF_IN(0, src)
BUF_IDX(1, ids)
BUF_OUT(2, dst)
layout(push_constant) uniform Push { uint rows, dim; } p;
#else
BUF_IN(0, src)
BUF_OUT(1, dst)
#if defined(KERNEL_LAYOUT_APPEND_AT)
BUF_IDX(2, rows)
#endif
layout(push_constant) uniform Push {
  uint n0, n1, n2, so, ss0, ss1, dof, ds0, ds1, item, row_stride, row_limit;
} p;
#endif

void main() {
  const uint stride = gl_NumWorkGroups.x * WG;
#if defined(KERNEL_LAYOUT_GATHER)
  for (uint i = gl_GlobalInvocationID.x; i < p.rows * p.dim; i += stride) {
    const uint r = i / p.dim, c = i % p.dim;
    dst[i] = src[ids[r] * p.dim + c];
  }
#else
  uint dof = p.dof;
#if defined(KERNEL_LAYOUT_APPEND_AT)
  const uint row = rows[p.item];
  if (row + p.n1 > p.row_limit) return;  // validation rejects this; never write past the cache
  dof += row * p.row_stride;
#endif
  const uint total = p.n0 * p.n1 * p.n2;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
    const uint i2 = i % p.n2, i1 = (i / p.n2) % p.n1, i0 = i / (p.n2 * p.n1);
    dst[dof + i0 * p.ds0 + i1 * p.ds1 + i2] = src[p.so + i0 * p.ss0 + i1 * p.ss1 + i2];
  }
#endif
}
