#version 450
#extension GL_GOOGLE_include_directive : require
// The expert-GEMV core: every gemv_quant_moe_id variant (plain, _offset, _batched, the fused gate + up
// + SiLU and its _batched form) is this one kernel under an addressing view (push constants). Pair p
// (p < pairs) takes its expert from ids[ids_off + p], its activation row from
//   a[a_off + (p / top_k) * outer + (p % top_k) * inner ..][:n_cols]
// and writes out row p: the plain variant is top_k 1, outer = src1_stride; the batched ones the
// (token, slot) strides; gate + up broadcasts one row (outer 0). With GATE_UP, each weight row is
// dotted against the gate stack (binding 1) and the up stack (binding 2), and out = silu(g) * u of
// the unrounded sums.
//
// The work: as gemv_quant.comp's decode GEMV, a work group owns NR rows of the pair's expert at a
// time (grid-stride over row blocks in x and over pairs in y); its invocations split the rows'
// 16-value chunks (experts.glsl, over quant.glsl's per-kind decoder), decode them in registers and
// dot them against the pair's activation chunk, loaded once for the NR rows and both stacks. The
// STACKS x NR partials are reduced with subgroup sums, then across subgroups through shared memory
// (or all WG partials through shared memory without subgroup arithmetic); the subgroup count is the
// device's (gl_NumSubgroups), never assumed.
#include "dtype.glsl"
#include "math.glsl"

#define NR 4u
#define MAX_WG 128u  // the part array's width: the planner keeps WG at or below it

#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 64, local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0;
layout(constant_id = 2) const uint GATE_UP = 0;  // 1: two stacks, out = silu(gate) * up
#define WG gl_WorkGroupSize.x
#define STACKS 2u

BUF_IN(0, a)
layout(std430, binding = 1) readonly buffer Buf1 { uint wg_[]; };
layout(std430, binding = 2) readonly buffer Buf2 { uint wu_[]; };  // the up stack (bound to gate without GATE_UP)
BUF_IDX(3, ids)
BUF_OUT(4, o)
#include "moe_gemv_push.glsl"  // the push block p

// Which stack quant.glsl's word reads come from (a private global: the decoder takes no buffer).
uint q_stack = 0u;
#define QUANT_WORD(i) (q_stack == 0u ? wg_[i] : wu_[i])
#include "experts.glsl"

shared float part[STACKS * NR][MAX_WG];

void main() {
  const uint t = gl_LocalInvocationIndex;
#ifdef USE_SUBGROUP
  const uint slot = gl_SubgroupID, slots = gl_NumSubgroups;
#else
  const uint slot = t, slots = WG;
#endif
  const uint stacks = GATE_UP == 1u ? 2u : 1u;
  const uint chunks = weight_chunks(KIND, p.n_cols);
  for (uint pr = gl_WorkGroupID.y; pr < p.pairs; pr += gl_NumWorkGroups.y) {
    // Uniform over the group (every invocation reads the same id), so the skip keeps the barriers
    // below in uniform control flow. The case's validation keeps ids in range; an id outside it
    // leaves the row unwritten (poisoned) instead of reading another tensor's memory.
    const uint e = ids[p.ids_off + pr];
    if (e >= p.experts) continue;
    const uint a_at = p.a_off + (pr / p.top_k) * p.outer + (pr % p.top_k) * p.inner;
    for (uint j0 = gl_WorkGroupID.x * NR; j0 < p.n_rows; j0 += gl_NumWorkGroups.x * NR) {
      float acc[STACKS][NR];
      for (uint s = 0u; s < STACKS; ++s)
        for (uint r = 0u; r < NR; ++r) acc[s][r] = 0.0;
      for (uint c = t; c < chunks; c += WG) {
        float av[16];
        for (uint x = 0u; x < 16u; ++x) {
          av[x] = 0.0;
          if (c * 16u + x < p.n_cols) av[x] = ld(a[a_at + c * 16u + x]);  // plain rows' tail: no read past n_cols
        }
        for (uint r = 0u; r < NR; ++r) {
          if (j0 + r >= p.n_rows) break;
          const uint base = weight_row_base(KIND, e * p.n_rows + j0 + r, p.n_cols);
          for (uint s = 0u; s < stacks; ++s) {
            q_stack = s;
            float wv[16];
            weight_decode16(KIND, base, c, p.n_cols, wv);
            float d = 0.0;
            for (uint x = 0u; x < 16u; ++x) d = fma(av[x], wv[x], d);
            acc[s][r] += d;
          }
        }
      }
      for (uint s = 0u; s < stacks; ++s)
        for (uint r = 0u; r < NR; ++r) {
#ifdef USE_SUBGROUP
          const float sum = subgroupAdd(acc[s][r]);
          if (subgroupElect()) part[s * NR + r][slot] = sum;
#else
          part[s * NR + r][slot] = acc[s][r];
#endif
        }
      barrier();  // every partial is in before one invocation per row sums them
      if (t < NR && j0 + t < p.n_rows) {
        float g = 0.0, u = 0.0;
        for (uint x = 0u; x < slots; ++x) g += part[t][x];
        if (GATE_UP == 1u) {
          for (uint x = 0u; x < slots; ++x) u += part[NR + t][x];
          g = silu_mul(g, u);
        }
        o[pr * p.n_rows + j0 + t] = st(g);
      }
      barrier();  // the part array is rewritten by the next row block
    }
  }
}
