#version 450
#extension GL_GOOGLE_include_directive : require
// Data movement, element for element (no conversion, so copies are bit-exact). Work groups stride
// over rows in y and over chunks of a row in x: no integer division per element.
//   KERNEL_LAYOUT_COPY       a 3-D strided copy: dst[do + i0 ds0 + i1 ds1 + i2] = src[so + i0 ss0 + i1 ss1 + i2]
//                            (transposes, splits, slices, cache appends)
//   KERNEL_LAYOUT_APPEND_AT  the same with do += rows[item] * row_stride, the row read on the device
//                            (per-sequence cache lengths); rows at or past row_limit are not written
//   KERNEL_LAYOUT_GATHER     dst[r, c] = src[ids[r], c] (embedding rows), for the ids in src's row window
#include "dtype.glsl"

// The work-group size is specialization constant 0, which the planner sets (vulkan/dense/layout.cpp: kWg;
// 256 when unset). Any size is correct: the loops stride by the grid.
layout(local_size_x = 256, local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x

#if defined(KERNEL_LAYOUT_GATHER)
BUF_IN(0, src)
BUF_IDX(1, ids)
BUF_OUT(2, dst)
// src may be a window of table rows [row_begin, row_begin + row_count): other ids are another dispatch's.
layout(push_constant) uniform Push { uint rows, dim, row_begin, row_count; } p;
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
  const uint cstride = gl_NumWorkGroups.x * WG, c0 = gl_WorkGroupID.x * WG + gl_LocalInvocationIndex;
#if defined(KERNEL_LAYOUT_GATHER)
  for (uint r = gl_WorkGroupID.y; r < p.rows; r += gl_NumWorkGroups.y) {
    const uint id = ids[r];
    if (id < p.row_begin || id - p.row_begin >= p.row_count) continue;
    const uint from = (id - p.row_begin) * p.dim;
    for (uint c = c0; c < p.dim; c += cstride) dst[r * p.dim + c] = src[from + c];
  }
#else
  uint dof = p.dof;
#if defined(KERNEL_LAYOUT_APPEND_AT)
  const uint row = rows[p.item];
  if (row + p.n1 > p.row_limit) return;  // validation rejects this; never write past the cache
  dof += row * p.row_stride;
#endif
  for (uint r = gl_WorkGroupID.y; r < p.n0 * p.n1; r += gl_NumWorkGroups.y) {
    const uint i0 = r / p.n1, i1 = r % p.n1;
    const uint s = p.so + i0 * p.ss0 + i1 * p.ss1, d = dof + i0 * p.ds0 + i1 * p.ds1;
    for (uint c = c0; c < p.n2; c += cstride) dst[d + c] = src[s + c];
  }
#endif
}
