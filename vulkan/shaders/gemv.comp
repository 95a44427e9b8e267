#version 450
#extension GL_GOOGLE_include_directive : require
// out[m, n] = sum_k a[m, k] * b[n, k] for small m (decode): memory-bound on b. A work group takes NR
// rows of b at a time and streams them along k (coalesced) against all m <= MAXM rows of a, each a
// value loaded once for NR rows. The m x NR partial sums are then reduced together, so a group pays
// two barriers per NR rows (barriers are the expensive part on CPU drivers): subgroup sums first
// when the device has subgroup arithmetic, else the whole group's partials through shared memory.
#include "dtype.glsl"

#define WG 128
#define MAXM 4
#define NR 8

#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = WG) in;
BUF_IN(0, a)
BUF_IN(1, b)
BUF_OUT(2, o)
#ifdef KERNEL_GEMV_BIAS
BUF_IN(3, bias)  // linear_3d_bias: bias[column] joins each F32 sum before its one rounding
#define OUT_VALUE(col, v) ((v) + ld(bias[col]))
#else
#define OUT_VALUE(col, v) (v)
#endif
// b may be a window of n rows: its outputs are columns n_off .. n_off + n of rows ldo wide.
layout(push_constant) uniform Push { uint m, n, k, ldo, n_off; } p;

shared float part[MAXM * NR][WG];  // per output, one partial per subgroup (or per invocation)

void main() {
  const uint t = gl_LocalInvocationIndex;
#ifdef USE_SUBGROUP
  const uint slot = gl_SubgroupID, slots = gl_NumSubgroups;
#else
  const uint slot = t, slots = WG;
#endif
  for (uint j0 = gl_WorkGroupID.x * NR; j0 < p.n; j0 += gl_NumWorkGroups.x * NR) {
    float acc[MAXM][NR];
    for (uint i = 0; i < MAXM; ++i)
      for (uint r = 0; r < NR; ++r) acc[i][r] = 0.0;
    for (uint kk = t; kk < p.k; kk += WG) {
      float bv[NR];
      for (uint r = 0; r < NR; ++r) {
        bv[r] = 0.0;
        if (j0 + r < p.n) bv[r] = ld(b[(j0 + r) * p.k + kk]);  // an if, so no load is speculated
      }
      for (uint i = 0; i < MAXM; ++i) {
        if (i >= p.m) break;
        const float av = ld(a[i * p.k + kk]);
        for (uint r = 0; r < NR; ++r) acc[i][r] = fma(av, bv[r], acc[i][r]);
      }
    }
    for (uint i = 0; i < MAXM; ++i)
      for (uint r = 0; r < NR; ++r) {
#ifdef USE_SUBGROUP
        const float s = subgroupAdd(acc[i][r]);
        if (subgroupElect()) part[i * NR + r][slot] = s;
#else
        part[i * NR + r][slot] = acc[i][r];
#endif
      }
    barrier();
    if (t < MAXM * NR) {
      const uint i = t / NR, r = t % NR;
      float s = 0.0;
      for (uint x = 0; x < slots; ++x) s += part[t][x];
      if (i < p.m && j0 + r < p.n) o[i * p.ldo + p.n_off + j0 + r] = st(OUT_VALUE(p.n_off + j0 + r, s));
    }
    barrier();
  }
}
