#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_quant for small m (decode): out[i, j] = sum_k a[i, k] * dequant(w)[j, k], memory-bound on the
// GGUF weight bytes. A work group owns NR weight rows at a time (grid-stride over row blocks); its
// invocations split the rows' 16-value chunks (quant.glsl), decode them in registers and multiply
// them against all m <= MAXM activation rows, each activation chunk loaded once for the NR rows. The
// MAXM x NR partials are reduced with subgroup sums, then across subgroups through shared memory
// (or, without subgroup arithmetic, all WG partials through shared memory). The subgroup size is
// the device's (gl_NumSubgroups), never assumed.
#include "dtype.glsl"

#define MAXM 4u
#define NR 4u
#define MAX_WG 128u  // the part array's width: the planner keeps WG at or below it

#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 64, local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0;
#define WG gl_WorkGroupSize.x

BUF_IN(0, a)
layout(std430, binding = 1) readonly buffer Buf1 { uint w[]; };
BUF_OUT(2, o)
// w may be a window (or one part of a fused weight) of n rows: its outputs are columns
// n_off .. n_off + n of rows ldo wide.
#include "quant_gemv_push.glsl"  // the push block p

#define QUANT_BUF w
#include "quant.glsl"

shared float part[MAXM * NR][MAX_WG];

void main() {
  const uint t = gl_LocalInvocationIndex;
#ifdef USE_SUBGROUP
  const uint slot = gl_SubgroupID, slots = gl_NumSubgroups;
#else
  const uint slot = t, slots = WG;
#endif
  const uint chunks = p.k / 16u, row_bytes = quant_row_bytes(KIND, p.k);
  for (uint j0 = gl_WorkGroupID.x * NR; j0 < p.n; j0 += gl_NumWorkGroups.x * NR) {
    float acc[MAXM][NR];
    for (uint i = 0u; i < MAXM; ++i)
      for (uint r = 0u; r < NR; ++r) acc[i][r] = 0.0;
    for (uint c = t; c < chunks; c += WG) {
      float av[MAXM][16];
      for (uint i = 0u; i < MAXM; ++i)
        for (uint e = 0u; e < 16u; ++e) {
          av[i][e] = 0.0;
          if (i < p.m) av[i][e] = ld(a[i * p.k + c * 16u + e]);  // an if, so no load is speculated
        }
      for (uint r = 0u; r < NR; ++r) {
        if (j0 + r >= p.n) break;
        float wv[16];
        quant_decode16(KIND, (j0 + r) * row_bytes, c, wv);
        for (uint i = 0u; i < MAXM; ++i) {
          if (i >= p.m) break;
          float s = 0.0;
          for (uint e = 0u; e < 16u; ++e) s = fma(av[i][e], wv[e], s);
          acc[i][r] += s;
        }
      }
    }
    for (uint i = 0u; i < MAXM; ++i)
      for (uint r = 0u; r < NR; ++r) {
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
      for (uint x = 0u; x < slots; ++x) s += part[t][x];
      if (i < p.m && j0 + r < p.n) o[i * p.ldo + p.n_off + j0 + r] = st(s);
    }
    barrier();  // the part array is rewritten by the next row block
  }
}
