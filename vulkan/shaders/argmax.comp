#version 450
#extension GL_GOOGLE_include_directive : require
// ids[r] = the first index of the maximum of row r of logits [m, n]: one work group per row; each
// invocation keeps its own first maximum, then the group takes the maximum value and the smallest
// index holding it.
#include "dtype.glsl"

#define WG 256
#include "reduce.glsl"

layout(local_size_x = WG) in;
BUF_IN(0, logits)
BUF_IDX_OUT(1, ids)
layout(push_constant) uniform Push { uint m, n; } p;

void main() {
  const uint t = gl_LocalInvocationIndex;
  for (uint row = gl_WorkGroupID.x; row < p.m; row += gl_NumWorkGroups.x) {
    // Strictly greater replaces, from -inf: a NaN never enters (it would block every later value of
    // this invocation) and ties keep the earlier index. Nothing above -inf in the row: 0, as the
    // reference gives.
    const float neg_inf = uintBitsToFloat(0xff800000u);
    float best = neg_inf;
    uint best_i = 0xffffffffu;
    for (uint i = t; i < p.n; i += WG) {
      const float v = ld(logits[row * p.n + i]);
      if (v > best) {
        best = v;
        best_i = i;
      }
    }
    const float mx = wg_max(best);
    const uint first = wg_min_u(best_i != 0xffffffffu && best == mx ? best_i : 0xffffffffu);
    if (t == 0) ids[row] = mx > neg_inf ? first : 0u;
  }
}
