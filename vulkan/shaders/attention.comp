#version 450
#extension GL_GOOGLE_include_directive : require
// Flash attention: softmax(scale q k^T) v with an online softmax over key tiles of BK rows staged
// in shared memory, never materialising the scores.
// A work group serves BQ query rows of one (batch, kv head): rows are the (head of the GQA group,
// query) pairs, so a decode step shares each K/V tile across the group's heads. Keys outside every
// row's visibility (causal, sliding window, kv length) are never loaded; per row, invisible keys get
// probability 0 by selection, so NaN-poisoned rows never reach the sums.
//   KERNEL_ATTN_FA   K row j = k1[j], V row j = v[j]                    (head_dim <= 256)
//   KERNEL_ATTN_MLA  K row j = concat(k1[j], k2[j]) (latent, rope), V = the latent rows (d <= 576)
// kv_len_index != ~0: this sequence's kv length is kv_lens[kv_len_index] (per-cache decode).
#include "dtype.glsl"

#if defined(KERNEL_ATTN_MLA)
#define HD_MAX 576
#define BQ 4
#define BK 8
#else
#define HD_MAX 256
#define BQ 8
#define BK 16
#endif
#define WG 64
#define DPT (HD_MAX / WG)  // output columns per invocation

layout(local_size_x = WG) in;
BUF_IN(0, q)
BUF_IN(1, k1)
BUF_IN(2, k2)
BUF_IN(3, v)
BUF_OUT(4, o)
BUF_IDX(5, kv_lens)
layout(push_constant) uniform Push {
  uint q_len, kv_len, pos_offset, nh, nkv, group, dqk, dk1, dv, causal, window;
  uint k1_hs, k2_hs, v_hs;  // elements between consecutive (batch, kv head) blocks
  float scale;
  uint q_off, o_off, kv_len_index;
} p;

shared float sq[BQ][HD_MAX];
shared float skv[BK * HD_MAX];  // the K tile d-major, then the V tile row-major
shared float sp[BQ][BK];
shared float sm[BQ], sl[BQ], scorr[BQ];

#define NEG_INF uintBitsToFloat(0xff800000u)

void main() {
  const uint t = gl_LocalInvocationIndex;
  const uint kvh = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint r0 = gl_WorkGroupID.x * BQ;
  const uint nrows = p.group * p.q_len;
  const uint kvlen = p.kv_len_index != 0xffffffffu ? kv_lens[p.kv_len_index] : p.kv_len;
  const uint slot = b * p.nkv + kvh;

  // The key range any row of this block can see.
  uint qi_lo = 0xffffffffu, qi_hi = 0u;
  for (uint r = r0; r < min(r0 + BQ, nrows); ++r) {
    qi_lo = min(qi_lo, r % p.q_len);
    qi_hi = max(qi_hi, r % p.q_len);
  }
  uint j_begin = 0u, j_end = kvlen;
  if (p.causal != 0u) j_end = min(j_end, p.pos_offset + qi_hi + 1u);
  if (p.window != 0u && p.pos_offset + qi_lo + 1u > p.window) j_begin = p.pos_offset + qi_lo + 1u - p.window;

  for (uint e = t; e < BQ * p.dqk; e += WG) {
    const uint rr = e / p.dqk, d = e % p.dqk, r = r0 + rr;
    float x = 0.0;
    if (r < nrows) {
      const uint h = kvh * p.group + r / p.q_len, qi = r % p.q_len;
      x = ld(q[p.q_off + ((b * p.nh + h) * p.q_len + qi) * p.dqk + d]);
    }
    sq[rr][d] = x;
  }
  if (t < BQ) {
    sm[t] = NEG_INF;
    sl[t] = 0.0;
  }
  float acc[BQ][DPT];
  for (uint rr = 0; rr < BQ; ++rr)
    for (uint c = 0; c < DPT; ++c) acc[rr][c] = 0.0;
  barrier();

  for (uint j0 = j_begin; j0 < j_end; j0 += BK) {
    // K tile stored d-major, so the score loop below reads consecutive keys in neighbouring lanes.
    for (uint e = t; e < BK * p.dqk; e += WG) {
      const uint jj = e / p.dqk, d = e % p.dqk, j = j0 + jj;
      float x = 0.0;
      if (j < j_end) {
        x = d < p.dk1 ? ld(k1[slot * p.k1_hs + j * p.dk1 + d])
                      : ld(k2[slot * p.k2_hs + j * (p.dqk - p.dk1) + d - p.dk1]);
      }
      skv[d * BK + jj] = x;
    }
    barrier();
    {
      const uint jj = t % BK, j = j0 + jj;
      for (uint rr = t / BK; rr < BQ; rr += WG / BK) {
        const uint r = r0 + rr;
        float s = NEG_INF;
        if (r < nrows && j < j_end) {
          const uint pos = p.pos_offset + r % p.q_len;
          const bool visible = (p.causal == 0u || j <= pos) && (p.window == 0u || j + p.window >= pos + 1u);
          if (visible) {
            float dot = 0.0;
            for (uint d = 0; d < p.dqk; ++d) dot = fma(sq[rr][d], skv[d * BK + jj], dot);
            s = dot * p.scale;
          }
        }
        sp[rr][jj] = s;
      }
    }
    barrier();
    if (t < BQ) {  // online softmax: one invocation per row
      const float m_old = sm[t];
      float m_new = m_old;
      for (uint jj = 0; jj < BK; ++jj) m_new = max(m_new, sp[t][jj]);
      float corr = 1.0, sum = 0.0;
      if (m_new != NEG_INF) {
        corr = exp(m_old - m_new);  // 0 while the row had seen nothing
        for (uint jj = 0; jj < BK; ++jj) {
          const float e = exp(sp[t][jj] - m_new);
          sp[t][jj] = e;
          sum += e;
        }
      } else {
        for (uint jj = 0; jj < BK; ++jj) sp[t][jj] = 0.0;
      }
      sm[t] = m_new;
      sl[t] = sl[t] * corr + sum;
      scorr[t] = corr;
    }
    // K is no longer needed: stage V in the same shared tile.
    for (uint e = t; e < BK * p.dv; e += WG) {
      const uint jj = e / p.dv, d = e % p.dv, j = j0 + jj;
      skv[jj * HD_MAX + d] = j < j_end ? ld(v[slot * p.v_hs + j * p.dv + d]) : 0.0;
    }
    barrier();
    for (uint c = 0; c < DPT; ++c) {
      const uint d = t + c * WG;
      if (d >= p.dv) break;
      for (uint rr = 0; rr < BQ; ++rr) {
        float a = acc[rr][c] * scorr[rr];
        for (uint jj = 0; jj < BK; ++jj) {
          const float pj = sp[rr][jj];
          if (pj != 0.0) a = fma(pj, skv[jj * HD_MAX + d], a);  // an invisible key contributes nothing, even NaN
        }
        acc[rr][c] = a;
      }
    }
    barrier();
  }

  for (uint rr = 0; rr < BQ; ++rr) {
    const uint r = r0 + rr;
    if (r >= nrows) break;
    const uint h = kvh * p.group + r / p.q_len, qi = r % p.q_len;
    const float l = sl[rr];
    for (uint c = 0; c < DPT; ++c) {
      const uint d = t + c * WG;
      if (d < p.dv) o[p.o_off + ((b * p.nh + h) * p.q_len + qi) * p.dv + d] = st(l > 0.0 ? acc[rr][c] / l : 0.0);
    }
  }
}
