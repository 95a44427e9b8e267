#version 450
#extension GL_GOOGLE_include_directive : require
// out[m, n] = sum_k a[m, k] * b[n, k] for small m (decode): memory-bound on b, so each work group
// streams rows of b once (coalesced along k) against all MAXM rows of a, then reduces across the
// group (subgroup arithmetic when the device has it).
#include "dtype.glsl"

#define WG 128
#define MAXM 4
#include "reduce.glsl"

layout(local_size_x = WG) in;
BUF_IN(0, a)
BUF_IN(1, b)
BUF_OUT(2, o)
layout(push_constant) uniform Push { uint m, n, k; } p;

void main() {
  const uint t = gl_LocalInvocationIndex;
  for (uint j = gl_WorkGroupID.x; j < p.n; j += gl_NumWorkGroups.x) {
    float acc[MAXM];
    for (uint i = 0; i < MAXM; ++i) acc[i] = 0.0;
    for (uint kk = t; kk < p.k; kk += WG) {
      const float bv = ld(b[j * p.k + kk]);
      for (uint i = 0; i < MAXM; ++i)
        if (i < p.m) acc[i] = fma(ld(a[i * p.k + kk]), bv, acc[i]);
    }
    for (uint i = 0; i < p.m; ++i) {
      const float s = wg_sum(acc[i]);
      if (t == 0) o[i * p.n + j] = st(s);
    }
  }
}
