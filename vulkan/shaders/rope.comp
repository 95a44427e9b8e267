#version 450
#extension GL_GOOGLE_include_directive : require
// Per-head RMS norm and rotate-half RoPE, fused, one work group per (token, head) row of head_dim:
//   mode 0: copy; 1: RMS norm over head_dim (weights w) then RoPE; 2: RoPE only.
// Rows are read at src[so + t * s_tok + h * hd] and written at dst[do + h * d_head + t * d_tok], so
// one kernel serves the token-major -> head-major transposes, the qkv split and the cache writes.
// The position is pos_offset + t, or positions[t] when use_positions is set.
#include "dtype.glsl"

#define WG 64
#include "reduce.glsl"

layout(local_size_x = WG) in;
BUF_IN(0, src)
BUF_OUT(1, dst)
BUF_IN(2, w)
BUF_IN(3, cos_t)
BUF_IN(4, sin_t)
BUF_IDX(5, positions)
layout(push_constant) uniform Push {
  uint rows, heads, hd, half_rot, mode;
  float eps;
  uint so, s_tok, dof, d_head, d_tok, pos_offset, use_positions;
} p;

void main() {
  const uint t = gl_LocalInvocationIndex;
  for (uint pair = gl_WorkGroupID.x; pair < p.rows * p.heads; pair += gl_NumWorkGroups.x) {
    const uint tok = pair / p.heads, h = pair % p.heads;
    const uint in0 = p.so + tok * p.s_tok + h * p.hd;
    const uint out0 = p.dof + h * p.d_head + tok * p.d_tok;
    if (p.mode == 0u) {
      for (uint i = t; i < p.hd; i += WG) dst[out0 + i] = src[in0 + i];
      continue;
    }
    float inv = 1.0;
    if (p.mode == 1u) {
      float ss = 0.0;
      for (uint i = t; i < p.hd; i += WG) {
        const float x = ld(src[in0 + i]);
        ss = fma(x, x, ss);
      }
      inv = 1.0 / sqrt(wg_sum(ss) / float(p.hd) + p.eps);
    }
    const uint pos = p.use_positions != 0u ? positions[tok] : p.pos_offset + tok;
    const uint tab = pos * p.half_rot;
    for (uint i = t; i < p.hd; i += WG) {
      float x = ld(src[in0 + i]);
      if (p.mode == 1u) x = x * inv * ld(w[i]);
      if (i >= 2u * p.half_rot) {
        dst[out0 + i] = st(x);  // past rotary_dim: passes through
      } else if (i < p.half_rot) {
        float y = ld(src[in0 + i + p.half_rot]);
        if (p.mode == 1u) y = y * inv * ld(w[i + p.half_rot]);
        const float c = ld(cos_t[tab + i]), s = ld(sin_t[tab + i]);
        dst[out0 + i] = st(x * c - y * s);
        dst[out0 + i + p.half_rot] = st(y * c + x * s);
      }
    }
  }
}
