#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Flash attention: softmax(scale q k^T) v with an online softmax over key tiles of BK rows staged
// in shared memory, never materialising the scores. The general kernel of the one attention engine
// of the core, paged and kv ops: they differ only in how a work group finds its sequence (p.seqs) and
// K/V rows (p.addr, p.kv_kind). A decode step's few rows per kv head take attention_decode.comp where
// the planner (vulkan/attention/attention_engine.cpp) finds it fits; its pieces merge here too.
// A work group serves BQ query rows of one (sequence, kv head): rows are the (head of the GQA group,
// query) pairs, so a decode step shares each K/V tile across the group's heads. Keys outside every
// row's visibility (causal, sliding window, kv length) are never loaded; per row, invisible keys get
// probability 0 by selection, so NaN-poisoned rows never reach the sums.
//   KERNEL_ATTN_FA   K row j = k1[j], V row j = v[j]                    (head_dim <= 256)
//   KERNEL_ATTN_MLA  K row j = concat(k1[j], k2[j]) (latent, rope), V = the latent rows (d <= 576)
//   KERNEL_ATTN_KV   KERNEL_ATTN_FA over pools of 32-bit words holding p.kv_kind elements (I8, F8_E4M3
//                    with an F32 scale per (block, kv head, slot), or F16 / BF16), dequantized on load
// kv_len_index != ~0: this sequence's kv length is kv_lens[kv_len_index] (per-cache decode).
// Key split (flash decoding), npieces > 1: work group x = block * npieces + piece sees only keys
// [piece * piece_keys, +piece_keys) and writes its rows' (m, l, acc[dv]) to `part`;
//   KERNEL_ATTN_COMBINE  one work group per row merges its pieces in key order into out = acc / l.
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

#include "attention_common.glsl"

layout(local_size_x = WG) in;
#if defined(KERNEL_ATTN_KV)
layout(std430, binding = 1) readonly buffer Buf1 { uint k1[]; };
layout(std430, binding = 2) readonly buffer Buf2 { uint k2[]; };
layout(std430, binding = 3) readonly buffer Buf3 { uint v[]; };
#else
BUF_IN(1, k1)
BUF_IN(2, k2)
BUF_IN(3, v)
#endif

// The ragged modes: flat row block `blk` as (sequence z, its block), walking the sequences' blocks of
// BQ rows in order (a few dozen sequences: cheap beside the keys). False past the step's last block.
bool ragged_block(inout uint blk, out uint z) {
  z = 0u;
  for (uint s = 0u; s < p.nseqs; ++s) {
    const uint nb = (p.group * (kv_lens[s + 1u] - kv_lens[s]) + BQ - 1u) / BQ;
    if (blk < nb) {
      z = s;
      return true;
    }
    blk -= nb;
  }
  return false;
}

#if defined(KERNEL_ATTN_COMBINE)
void main() {
  // A (row, kv head, sequence) work group, or in the ragged modes a (token, head) one; its output row,
  // the row its pieces' states are kept by (part_row) and its lse entry.
  uint row, prow, h, lse_at;
  if (ragged()) {
    h = gl_WorkGroupID.y;
    row = gl_WorkGroupID.x * p.nh + h;
    prow = row;
    lse_at = h * p.total_q + gl_WorkGroupID.x;
  } else {
    const uint r = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, z = gl_WorkGroupID.z;
    const Seq sq = seq_of(z);
    if (r >= p.group * sq.n) return;  // the whole work group: rows past this sequence's
    const uint qi = r % sq.n;
    h = kvh * p.group + r / sq.n;
    row = q_row(sq, z, h, qi);
    prow = part_row(sq, z, kvh, r);
    lse_at = h * p.total_q + sq.row0 + qi;
  }
  const uint first = part_offset(prow, 0u), stride = p.dv + 2u, out_base = p.o_off + row * p.dv;
  // Pieces 8 at a time, their loads issued together: a decode's row has dozens of pieces, and one
  // load in flight at a time would cost a cache latency per piece.
  float m = NEG_INF;
  for (uint s0 = 0u; s0 < p.npieces; s0 += 8u) {
    float ms[8];
    [[unroll]] for (uint k = 0u; k < 8u; ++k) {
      ms[k] = NEG_INF;
      if (s0 + k < p.npieces) ms[k] = part[first + (s0 + k) * stride];  // an if: no load past the pieces
    }
    [[unroll]] for (uint k = 0u; k < 8u; ++k) m = max(m, ms[k]);
  }
  for (uint d = gl_LocalInvocationIndex; d < p.dv; d += WG) {
    float l = 0.0, acc = 0.0;
    for (uint s0 = 0u; s0 < p.npieces; s0 += 8u) {
      float pm[8], pl[8], pa[8];
      [[unroll]] for (uint k = 0u; k < 8u; ++k) {
        const uint u = first + (s0 + k) * stride;
        pm[k] = NEG_INF;
        pl[k] = 0.0;
        pa[k] = 0.0;
        if (s0 + k < p.npieces) {
          pm[k] = part[u];
          pl[k] = part[u + 1u];
          pa[k] = part[u + 2u + d];
        }
      }
      [[unroll]] for (uint k = 0u; k < 8u; ++k) {  // key order: the same sums every run
        // 0 for a piece that saw no key (m = -inf, l = acc = 0), or past the last; a piece that saw
        // a NaN score has l NaN, which its weight carries into the row's (0 * NaN included).
        if (s0 + k >= p.npieces) break;
        const float w = pm[k] == NEG_INF ? 0.0 : exp(pm[k] - m);
        l = fma(pl[k], w, l);
        acc = fma(pa[k], w, acc);
      }
    }
    // l == 0: no key seen, zeros; a NaN l divides through: the row is NaN, as the reference's.
    o[out_base + d] = st(l != 0.0 ? acc / l : 0.0);
    if (p.seqs == SEQS_FA2 && d == 0u) lse[lse_at] = l != 0.0 ? m + log(l) : NEG_INF;
  }
}
#else

shared float sq_[BQ][HD_MAX];
shared float skv[BK * HD_MAX];  // the K tile d-major, then the V tile row-major
shared float sp[BQ][BK];
shared float sm[BQ], sl[BQ], scorr[BQ];
shared uvec2 srange[BQ];  // each row's visible keys; empty past the last row
// The tile's K and V rows: where each starts (and its scales, KERNEL_ATTN_KV), found once per tile.
shared uint skb[BK], svb[BK];
shared float sks[BK], svs[BK];

#if defined(KERNEL_ATTN_KV)
// Element e of a pool of p.kv_kind elements packed in 32-bit words.
float kv_elem(uint w, uint e) { return kv_elem_of(p.kv_kind, w, e); }
uint kv_word(uint e) { return kv_elem_bytes(p.kv_kind) == 2u ? e >> 1 : e >> 2; }
#define LD_K(jj, e) (kv_elem(k1[kv_word(e)], e) * sks[jj])
#define LD_V(jj, e) (kv_elem(v[kv_word(e)], e) * svs[jj])
#else
#define LD_K(jj, e) ld(k1[e])
#define LD_V(jj, e) ld(v[e])
#endif

// Keys j0 .. j0 + BK below j_end: where their K and V rows start, by invocations t < BK.
void stage_rows(uint t, uint j0, uint j_end, Seq s, uint slot, uint kvh) {
  const uint j = j0 + t;
  if (t >= BK || j >= j_end) return;
  const KvRow kr = kv_row(s, slot, kvh, j);
  skb[t] = kr.k;
  svb[t] = kr.v;
#if defined(KERNEL_ATTN_KV)
  const bool scaled = kv_scaled(p.kv_kind) && kr.scale != 0xffffffffu;
  sks[t] = scaled ? k_scales[kr.scale] : 1.0;
  svs[t] = scaled ? v_scales[kr.scale] : 1.0;
#endif
}

// Channel d of the tile's key jj / value jj, as an element index: vLLM's key groups of x channels
// lie block_size x apart, its value channels block_size apart; other layouts' rows are contiguous
// (x_shift 0).
uint key_elem(uint jj, uint d) {
  const uint groups = p.addr == ADDR_VLLM ? p.block_size << p.x_shift : 1u;
  return skb[jj] + (d >> p.x_shift) * groups + (d & ((1u << p.x_shift) - 1u));
}
uint value_elem(uint jj, uint d) { return svb[jj] + d * (p.addr == ADDR_VLLM ? p.block_size : 1u); }

void main() {
  const uint t = gl_LocalInvocationIndex;
  const uint kvh = gl_WorkGroupID.y, piece = gl_WorkGroupID.x % p.npieces;
  uint z = gl_WorkGroupID.z, blk = gl_WorkGroupID.x / p.npieces;
  // Uniform over the work group: a group past the step's blocks leaves whole, no barrier pending.
  if (ragged() && !ragged_block(blk, z)) return;
  const uint r0 = blk * BQ;
  const Seq sq = seq_of(z);
  const uint nrows = p.group * sq.n;
  if (r0 >= nrows) return;  // the whole work group: this sequence has fewer rows than the grid's
  const uint slot = z * p.nkv + kvh;

  // The key range any row of this block can see. Loops below avoid integer division by
  // non-constant values where they can: it is slow on GPUs and scalarised on CPU drivers.
  uint j_begin = 0xffffffffu, j_end = 0u;
  for (uint r = r0; r < min(r0 + BQ, nrows); ++r) {
    const uvec2 kr = visible_keys(sq, r % sq.n);
    if (kr.x < kr.y) {
      j_begin = min(j_begin, kr.x);
      j_end = max(j_end, kr.y);
    }
  }
  if (p.npieces > 1u) {  // a piece outside [j_begin, j_end) runs no tile and writes an empty state
    j_begin = max(j_begin, piece * p.piece_keys);
    j_end = min(j_end, (piece + 1u) * p.piece_keys);
  }

  for (uint rr = 0; rr < BQ; ++rr) {
    const uint r = r0 + rr;
    const uint h = kvh * p.group + r / sq.n, qi = r % sq.n;
    if (t == 0u) srange[rr] = r < nrows ? visible_keys(sq, qi) : uvec2(0u);
    const uint base = p.q_off + q_row(sq, z, h, qi) * p.dqk;
    for (uint d = t; d < p.dqk; d += WG) {
      float x = 0.0;
      if (r < nrows) x = ld(q[base + d]);  // an if, not ?:, so no load is ever speculated
      sq_[rr][d] = x;
    }
  }
  if (t < BQ) {
    sm[t] = NEG_INF;
    sl[t] = 0.0;
  }
  float acc[BQ][DPT];
  for (uint rr = 0; rr < BQ; ++rr)
    for (uint c = 0; c < DPT; ++c) acc[rr][c] = 0.0;
  stage_rows(t, j_begin, j_end, sq, slot, kvh);
  barrier();

  for (uint j0 = j_begin; j0 < j_end; j0 += BK) {
    // K tile stored d-major, so the score loop below reads consecutive keys in neighbouring lanes.
    for (uint jj = 0; jj < BK; ++jj) {
      const uint j = j0 + jj;
      const uint b2 = slot * p.k2_hs + j * (p.dqk - p.dk1) - p.dk1;
      for (uint d = t; d < p.dqk; d += WG) {
        float x = 0.0;
        if (j < j_end) {
          if (d < p.dk1) x = LD_K(jj, key_elem(jj, d));
#if !defined(KERNEL_ATTN_KV)
          else x = ld(k2[b2 + d]);
#endif
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
          if (rr < BQ) dots[i] = fma(sq_[rr][d], kd, dots[i]);
        }
      }
      for (uint i = 0; i < RPL; ++i) {
        const uint rr = g + i * (WG / BK);
        if (rr >= BQ) break;
        const uvec2 kr = srange[rr];
        const bool visible = j < j_end && j >= kr.x && j < kr.y;
        sp[rr][jj] = visible ? dots[i] * p.scale : NEG_INF;  // a select: a NaN dot of a hidden key is dropped
      }
    }
    barrier();
    if (t < BQ) {  // online softmax: one invocation per row
      const float m_old = sm[t];
      // GLSL's max is undefined for a NaN operand: NaN scores stay out of the max and poison the
      // row's sum instead (their weights are NaN below too), as the reference's softmax is NaN.
      float m_new = m_old;
      bool nan_seen = false;
      for (uint jj = 0; jj < BK; ++jj) {
        const float s = sp[t][jj];
        if (isnan(s)) nan_seen = true;
        else m_new = max(m_new, s);
      }
      float corr = 1.0, sum = 0.0;
      if (m_new != NEG_INF) {
        corr = exp(m_old - m_new);  // 0 while the row had seen nothing
        const uvec2 kr = srange[t];
        for (uint jj = 0; jj < BK; ++jj) {
          // A hidden key (past the tile, outside the row's range) weighs -0.0, which the P.V loop
          // skips (its value may be a pool's NaN); a visible key's weight is multiplied in even when
          // it is +0 (a -Inf score, an underflow), as the reference's p_j v_j is: 0 x NaN is NaN.
          const uint j = j0 + jj;
          const float e = j < j_end && j >= kr.x && j < kr.y ? exp(sp[t][jj] - m_new) : NEG_ZERO;
          sp[t][jj] = e;
          sum += e;
        }
      } else {  // every visible score -Inf so far: masked keys (docs/catalog.md, "Special values")
        for (uint jj = 0; jj < BK; ++jj) sp[t][jj] = NEG_ZERO;
      }
      sm[t] = m_new;
      // A +Inf score is the max, and the reference's exp(s - max) is exp(Inf - Inf) = NaN: as a NaN score.
      sl[t] = nan_seen || (isinf(m_new) && m_new > 0.0) ? QNAN : sl[t] * corr + sum;
      scorr[t] = corr;
    }
    // K is no longer needed: stage V in the same shared tile.
    for (uint jj = 0; jj < BK; ++jj) {
      const uint j = j0 + jj;
      for (uint d = t; d < p.dv; d += WG) {
        float x = 0.0;
        if (j < j_end) x = LD_V(jj, value_elem(jj, d));
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
          if (floatBitsToUint(pj) != 0x80000000u) a[rr] = fma(pj, vd, a[rr]);  // a hidden key (-0.0): nothing, even NaN
        }
      }
      for (uint rr = 0; rr < BQ; ++rr) acc[rr][c] = a[rr];
    }
    // Nothing reads the row starts between the V load above and the next tile's K load: the next
    // tile's are found here, before the barrier that ends this one.
    stage_rows(t, j0 + BK, j_end, sq, slot, kvh);
    barrier();
  }

  for (uint rr = 0; rr < BQ; ++rr) {
    const uint r = r0 + rr;
    if (r >= nrows) break;
    const float l = sl[rr];
    if (p.npieces > 1u) {
      const uint u = part_offset(part_row(sq, z, kvh, r), piece);
      if (t == 0u) {
        part[u] = sm[rr];
        part[u + 1u] = l;
      }
      for (uint c = 0; c < DPT; ++c) {
        const uint d = t + c * WG;
        if (d < p.dv) part[u + 2u + d] = acc[rr][c];
      }
    } else {
      const uint h = kvh * p.group + r / sq.n, qi = r % sq.n;
      const uint base = p.o_off + q_row(sq, z, h, qi) * p.dv;
      for (uint c = 0; c < DPT; ++c) {
        const uint d = t + c * WG;
        if (d < p.dv) o[base + d] = st(l != 0.0 ? acc[rr][c] / l : 0.0);
      }
      if (p.seqs == SEQS_FA2 && t == 0u) lse[h * p.total_q + sq.row0 + qi] = l != 0.0 ? sm[rr] + log(l) : NEG_INF;
    }
  }
}
#endif
