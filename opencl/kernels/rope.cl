// The qk-norm / RoPE family: one work-group per (token, head) vector of head_dim elements.
// The vector is staged in local memory (RoPE pairs element i with i + rotary_dim/2), optionally
// RMS-normalised over all of head_dim (a work-group reduction), rotated (rotate-half form, tables
// [max_pos, rotary_dim/2]) and written at any token / head strides: token-major in, head-major or
// token-major out, into a plain tensor or a cache. mode 0 transpose only, 1 norm then RoPE, 2 RoPE only.
// Positions: positions[token] when use_positions, else pos_offset + token.
// -DDST, a DEST_* of core/kinds.inc's TS_POOL_DESTS (kinds.h): DEST_AFFINE the strides above; else
// token t goes to pool position dst_pos[t] of sequence dst_seq[t], slot pos % block_size of block
// tables[seq][pos / block_size] (blocks dst_tok_stride elements apart, kv heads dst_head_stride apart
// within a block), as a ferrum row, vLLM's key (groups of kx channels, block_size * kx apart) or vLLM's
// value (channel-major). DST is a build constant: the branches below on it fold away.
#include "kinds.h"
#include "rope_args.h"
#ifndef DST
#define DST DEST_AFFINE
#endif

// Element c of a destination row that starts at o (its pool slot `slot` where the row is in a pool).
inline size_t dest_at(size_t o, int c, uint slot, int hd, int block_size, int kx) {
  if (DST == DEST_FERRUM) return o + (size_t)slot * hd + c;
  if (DST == DEST_VLLM_KEY) return o + (size_t)(c / kx) * block_size * kx + (size_t)slot * kx + c % kx;
  if (DST == DEST_VLLM_VALUE) return o + (size_t)c * block_size + slot;
  return o + c;
}
// Scalars by name in NormRopeArgs (rope_args.h); local memory: the vector (hd floats), then the
// reduction's (one float per work-item).
__kernel void norm_rope(__constant NormRopeArgs* args, __global const st_t* src, __global st_t* dst,
                        __global const st_t* norm_w, __global const st_t* cos_t, __global const st_t* sin_t,
                        __global const uint* positions, __global const uint* dst_pos, __global const uint* dst_seq,
                        __global const uint* tables, __local float* smem) {
  TS_ARGS_READ(TS_NORM_ROPE_ARGS)
  __local float* xs = smem;
  __local float* red = smem + hd;
  const int lid = get_local_id(0), g = get_local_size(0);
  const int t = get_group_id(1), h = get_group_id(2);
  __global const st_t* x = src + src_off + (size_t)t * src_tok_stride + (size_t)h * src_head_stride;
  float ss = 0.0f;
  for (int c = lid; c < hd; c += g) {
    const float v = LD(x, c);
    xs[c] = v;
    ss = fma(v, v, ss);
  }
  const float total = wg_sum(ss, red);  // also the barrier that publishes xs
  if (mode == 1) {
    const float inv = 1.0f / sqrt(total / hd + eps);
    for (int c = lid; c < hd; c += g) xs[c] = xs[c] * inv * LD(norm_w, c);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const int half_rot = rotary_dim / 2;
  const size_t pos = use_positions ? positions[t] : (size_t)(pos_offset + t);
  __global const st_t* cs = cos_t + pos * half_rot;
  __global const st_t* sn = sin_t + pos * half_rot;
  size_t o = dst_off + (size_t)h * dst_head_stride;
  uint slot = 0;
  if (DST == DEST_AFFINE) {
    o += (size_t)t * dst_tok_stride;
  } else {
    const uint dp = dst_pos[t];
    slot = dp % block_size;
    o += (size_t)tables[(size_t)dst_seq[t] * table_width + dp / block_size] * dst_tok_stride;
  }
  for (int c = lid; c < hd; c += g) {
    float y = xs[c];
    if (mode != 0 && c < rotary_dim) {
      y = c < half_rot ? xs[c] * LD(cs, c) - xs[c + half_rot] * LD(sn, c)
                       : xs[c] * LD(cs, c - half_rot) + xs[c - half_rot] * LD(sn, c - half_rot);
    }
    ST(dst, dest_at(o, c, slot, hd, block_size, kx), y);
  }
}

// apply_rope_positions / apply_rope_partial: x [seq, heads, hd] rotated at positions[t], the angles
// computed here in fixed-point turns (core/ops/tensor/rope_angle.h): turn_words [rot/2, 2] holds each
// pair's G = 2^64 f / (2 pi) as (hi, lo), and t = pos * hi + mul_hi(pos, lo) (wrapping) is the turn's
// 32-bit fraction, exact at any position. As a signed integer t / 2^31 is the angle / pi in [-1, 1):
// sinpi / cospi of it (4 ulp), its conversion to F32 the only rounding before them.
// One work-item per (slot j, head, token): slot j < rot/2 rotates pair (j, j + rot/2), slot j >= rot/2
// copies channel j + rot/2 (the channels past rotary_dim).
__kernel void rope_positions(__global const st_t* x, __global const uint* positions, __global const uint* turn_words,
                             __global st_t* out, int heads, int hd, int rot) {
  const int j = get_global_id(0), h = get_global_id(1), tok = get_global_id(2);
  const int half_rot = rot / 2;
  if (j >= hd - half_rot || h >= heads) return;
  const size_t row = ((size_t)tok * heads + h) * hd;
  if (j >= half_rot) {
    ST(out, row + j + half_rot, LD(x, row + j + half_rot));
    return;
  }
  const uint pos = positions[tok];
  const uint t = pos * turn_words[2 * j] + mul_hi(pos, turn_words[2 * j + 1]);
  const float r = (float)(int)t * 0x1p-31f;  // the angle / pi
  const float c = cospi(r), s = sinpi(r);
  const float a = LD(x, row + j), b = LD(x, row + half_rot + j);
  ST(out, row + j, a * c - b * s);
  ST(out, row + half_rot + j, b * c + a * s);
}

// The rows of a ragged batch (the paged split's varlen form): row t belongs to the sequence s with
// cu[s] <= t < cu[s + 1] (a binary search of the non-decreasing cu_seqlens_q, which starts at 0 and
// ends at `tokens`: the case's validation) and sits at position pos_offsets[s] + t - cu[s]; written to
// the tables the norm_rope writes read (dst_pos, dst_seq and the RoPE positions).
__kernel void varlen_slots(__global const uint* cu, __global const uint* pos_offsets, int nseq, int tokens,
                           __global uint* pos, __global uint* seq) {
  const int t = get_global_id(0);
  if (t >= tokens) return;
  int lo = 0, hi = nseq;  // cu[lo] <= t < cu[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if ((int)cu[mid] <= t) lo = mid;
    else hi = mid;
  }
  seq[t] = (uint)lo;
  pos[t] = pos_offsets[lo] + (uint)t - cu[lo];
}
