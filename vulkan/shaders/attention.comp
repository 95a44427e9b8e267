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
// Key split (flash decoding), npieces > 1: work group x = block * npieces + piece sees only keys
// [piece * piece_keys, +piece_keys) and writes its rows' (m, l, acc[dv]) to `part`;
//   KERNEL_ATTN_COMBINE  one work group per row merges its pieces in key order into out = acc / l.
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
#define RPL ((BQ + WG / BK - 1) / (WG / BK))  // score rows per invocation

layout(local_size_x = WG) in;
BUF_IN(0, q)
BUF_IN(1, k1)
BUF_IN(2, k2)
BUF_IN(3, v)
BUF_OUT(4, o)
BUF_IDX(5, kv_lens)
layout(std430, binding = 6) buffer Part { float part[]; };  // the pieces' states (scratch, float)
layout(push_constant) uniform Push {
  uint q_len, kv_len, pos_offset, nh, nkv, group, dqk, dk1, dv, causal, window;
  uint k1_hs, k2_hs, v_hs;  // elements between consecutive (batch, kv head) blocks
  float scale;
  uint q_off, o_off, kv_len_index;
  uint piece_keys, npieces;  // ~0, 1 without a key split
} p;

#define NEG_INF uintBitsToFloat(0xff800000u)

// Row r (head of the group, query) of (batch b, kv head kvh): its row in out, [batch, heads, q_len].
uint out_row(uint b, uint kvh, uint r) { return (b * p.nh + kvh * p.group + r / p.q_len) * p.q_len + r % p.q_len; }
// The state of piece s of row r of (b, kv head) in `part`: m, l, then acc[dv].
uint part_offset(uint slot, uint r, uint s) { return ((slot * p.group * p.q_len + r) * p.npieces + s) * (p.dv + 2u); }

#if defined(KERNEL_ATTN_COMBINE)
void main() {
  const uint r = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint slot = b * p.nkv + kvh, first = part_offset(slot, r, 0u), stride = p.dv + 2u;
  float m = NEG_INF;
  for (uint s = 0; s < p.npieces; ++s) m = max(m, part[first + s * stride]);
  const uint out_base = p.o_off + out_row(b, kvh, r) * p.dv;
  for (uint d = gl_LocalInvocationIndex; d < p.dv; d += WG) {
    float l = 0.0, acc = 0.0;
    if (m != NEG_INF) {
      for (uint s = 0; s < p.npieces; ++s) {  // key order: the same sums every run
        const uint u = first + s * stride;
        const float w = exp(part[u] - m);  // 0 for a piece that saw no key (m = -inf, l = acc = 0)
        l = fma(part[u + 1u], w, l);
        acc = fma(part[u + 2u + d], w, acc);
      }
    }
    o[out_base + d] = st(l > 0.0 ? acc / l : 0.0);
  }
}
#else

shared float sq[BQ][HD_MAX];
shared float skv[BK * HD_MAX];  // the K tile d-major, then the V tile row-major
shared float sp[BQ][BK];
shared float sm[BQ], sl[BQ], scorr[BQ];
shared uint srow[BQ];

void main() {
  const uint t = gl_LocalInvocationIndex;
  const uint kvh = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint piece = gl_WorkGroupID.x % p.npieces, r0 = gl_WorkGroupID.x / p.npieces * BQ;
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
  if (p.npieces > 1u) {  // a piece outside [j_begin, j_end) runs no tile and writes an empty state
    j_begin = max(j_begin, piece * p.piece_keys);
    j_end = min(j_end, (piece + 1u) * p.piece_keys);
  }

  // Row rr's query position, or ~0 past the last row. Loops below avoid integer division by
  // non-constant values: it is slow on GPUs and scalarised on CPU drivers.
  for (uint rr = 0; rr < BQ; ++rr) {
    const uint r = r0 + rr;
    const uint h = kvh * p.group + r / p.q_len, qi = r % p.q_len;
    if (t == 0u) srow[rr] = r < nrows ? p.pos_offset + qi : 0xffffffffu;
    const uint base = p.q_off + ((b * p.nh + h) * p.q_len + qi) * p.dqk;
    for (uint d = t; d < p.dqk; d += WG) {
      float x = 0.0;
      if (r < nrows) x = ld(q[base + d]);  // an if, not ?:, so no load is ever speculated
      sq[rr][d] = x;
    }
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
    for (uint jj = 0; jj < BK; ++jj) {
      const uint j = j0 + jj;
      const uint b1 = slot * p.k1_hs + j * p.dk1, b2 = slot * p.k2_hs + j * (p.dqk - p.dk1) - p.dk1;
      for (uint d = t; d < p.dqk; d += WG) {
        float x = 0.0;
        if (j < j_end) {
          if (d < p.dk1) x = ld(k1[b1 + d]);
          else x = ld(k2[b2 + d]);
        }
        skv[d * BK + jj] = x;
      }
    }
    barrier();
    {
      // Lane (jj, g) scores key jj against rows g, g + WG/BK, ...: each K value is loaded once.
      const uint jj = t % BK, j = j0 + jj, g = t / BK;
      float dots[RPL];
      for (uint i = 0; i < RPL; ++i) dots[i] = 0.0;
      for (uint d = 0; d < p.dqk; ++d) {
        const float kd = skv[d * BK + jj];
        for (uint i = 0; i < RPL; ++i) {
          const uint rr = g + i * (WG / BK);
          if (rr < BQ) dots[i] = fma(sq[rr][d], kd, dots[i]);
        }
      }
      for (uint i = 0; i < RPL; ++i) {
        const uint rr = g + i * (WG / BK);
        if (rr >= BQ) break;
        const uint pos = srow[rr];
        const bool visible = pos != 0xffffffffu && j < j_end && (p.causal == 0u || j <= pos) &&
                             (p.window == 0u || j + p.window >= pos + 1u);
        sp[rr][jj] = visible ? dots[i] * p.scale : NEG_INF;  // a select: a NaN dot of a hidden key is dropped
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
    for (uint jj = 0; jj < BK; ++jj) {
      const uint j = j0 + jj, base = slot * p.v_hs + j * p.dv;
      for (uint d = t; d < p.dv; d += WG) {
        float x = 0.0;
        if (j < j_end) x = ld(v[base + d]);
        skv[jj * HD_MAX + d] = x;
      }
    }
    barrier();
    for (uint c = 0; c < DPT; ++c) {
      const uint d = t + c * WG;
      if (d >= p.dv) break;
      float a[BQ];
      for (uint rr = 0; rr < BQ; ++rr) a[rr] = acc[rr][c] * scorr[rr];
      for (uint jj = 0; jj < BK; ++jj) {
        const float vd = skv[jj * HD_MAX + d];  // loaded once for every row
        for (uint rr = 0; rr < BQ; ++rr) {
          const float pj = sp[rr][jj];
          if (pj != 0.0) a[rr] = fma(pj, vd, a[rr]);  // an invisible key contributes nothing, even NaN
        }
      }
      for (uint rr = 0; rr < BQ; ++rr) acc[rr][c] = a[rr];
    }
    barrier();
  }

  for (uint rr = 0; rr < BQ; ++rr) {
    const uint r = r0 + rr;
    if (r >= nrows) break;
    const float l = sl[rr];
    if (p.npieces > 1u) {
      const uint u = part_offset(slot, r, piece);
      if (t == 0u) {
        part[u] = sm[rr];
        part[u + 1u] = l;
      }
      for (uint c = 0; c < DPT; ++c) {
        const uint d = t + c * WG;
        if (d < p.dv) part[u + 2u + d] = acc[rr][c];
      }
    } else {
      const uint base = p.o_off + out_row(b, kvh, r) * p.dv;
      for (uint c = 0; c < DPT; ++c) {
        const uint d = t + c * WG;
        if (d < p.dv) o[base + d] = st(l > 0.0 ? acc[rr][c] / l : 0.0);
      }
    }
  }
}
#endif
