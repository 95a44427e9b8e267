#version 450
#extension GL_GOOGLE_include_directive : require
// Per-head RMS norm and rotate-half RoPE, fused, one work group per (token, head) row of head_dim:
//   mode 0: copy; 1: RMS norm over head_dim (weights w) then RoPE; 2: RoPE only.
// Rows are read at src[so + t * s_tok + h * hd] and written at dst[do + h * d_head + t * d_tok], so
// one kernel serves the token-major -> head-major transposes, the qkv split and the cache writes.
// The position is pos_offset + t, or positions[t] when use_positions is 1; 2: a ragged batch, row
// t of sequence s (cu[s] <= t < cu[s+1]) at positions[s] + t - cu[s].
// Paged destinations (DEST != 0, the k and v rows of the split into a KV pool): row t lands in slot
// pos % block_size of block tables[seq * width + pos / block_size], pos its position in the pool
// (cache_len + t, or a ragged row's own position), in ferrum's layout [blocks, heads, bs, hd] or
// vLLM's key [blocks, heads, hd / x, bs, x] or value [blocks, heads, hd, bs].
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
BUF_IDX(6, tables)
BUF_IDX(7, cu)
#include "rope_push.glsl"  // the push block p
#include "kinds.glsl"      // DEST_*: core/kinds.inc's TS_POOL_DESTS

// Element i of the destination row whose base `row` dest_row gave.
uint dest_index(uint row, uint i) {
  if (p.dest == DEST_VLLM_KEY) return row + (i >> p.x_shift) * (p.block_size << p.x_shift) + (i & ((1u << p.x_shift) - 1u));
  if (p.dest == DEST_VLLM_VALUE) return row + i * p.block_size;
  return row + i;
}

// Where row (tok, h) starts in the destination: affine, or its pool slot through the table of
// sequence `seq` at pool position pos.
uint dest_row(uint tok, uint h, uint seq, uint pos) {
  if (p.dest == DEST_AFFINE) return p.dof + h * p.d_head + tok * p.d_tok;
  const uint head = tables[seq * p.width + pos / p.block_size] * p.heads + h, at = pos % p.block_size;
  if (p.dest == DEST_FERRUM) return (head * p.block_size + at) * p.hd;
  if (p.dest == DEST_VLLM_KEY) return head * p.hd * p.block_size + (at << p.x_shift);
  return head * p.hd * p.block_size + at;
}

void main() {
  const uint t = gl_LocalInvocationIndex;
  for (uint pair = gl_WorkGroupID.x; pair < p.rows * p.heads; pair += gl_NumWorkGroups.x) {
    const uint tok = pair / p.heads, h = pair % p.heads;
    const uint in0 = p.so + tok * p.s_tok + h * p.hd;
    uint seq = 0u, pos = p.pos_offset + tok;
    if (p.use_positions == 1u) pos = positions[tok];
    if (p.use_positions == 2u) {
      while (seq + 1u < p.num_seqs && tok >= cu[seq + 1u]) ++seq;  // a ragged batch has few sequences
      pos = positions[seq] + tok - cu[seq];
    }
    const uint out0 = dest_row(tok, h, seq, p.use_positions == 2u ? pos : p.cache_len + tok);
    if (p.mode == 0u) {
      for (uint i = t; i < p.hd; i += WG) dst[dest_index(out0, i)] = src[in0 + i];
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
    const uint tab = pos * p.half_rot;
    for (uint i = t; i < p.hd; i += WG) {
      float x = ld(src[in0 + i]);
      if (p.mode == 1u) x = x * inv * ld(w[i]);
      if (i >= 2u * p.half_rot) {
        dst[dest_index(out0, i)] = st(x);  // past rotary_dim: passes through
      } else if (i < p.half_rot) {
        float y = ld(src[in0 + i + p.half_rot]);
        if (p.mode == 1u) y = y * inv * ld(w[i + p.half_rot]);
        const float c = ld(cos_t[tab + i]), s = ld(sin_t[tab + i]);
        dst[dest_index(out0, i)] = st(x * c - y * s);
        dst[dest_index(out0, i + p.half_rot)] = st(y * c + x * s);
      }
    }
  }
}
