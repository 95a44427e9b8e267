#version 450
#extension GL_GOOGLE_include_directive : require
// Flash attention: softmax(scale q k^T) v with an online softmax over key tiles of BK rows staged
// in shared memory, never materialising the scores. The one attention engine of the core, paged and
// kv ops: they differ only in how a work group finds its sequence (p.seqs) and K/V rows (p.addr,
// p.kv_kind).
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
#include "dtype.glsl"
#include "kinds.glsl"

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

// The view's modes are push constants, not specialization constants: every op then runs the same
// pipeline per dtype, which a driver's shader cache compiles once (lavapipe takes seconds for it),
// and each mode is a branch uniform over the dispatch.
// p.addr: where K/V row j of a sequence lives: affine (row j at base + j * k1_rs / v_rs: a token-major
// cache's rows lie nkv heads apart and are read there), or paged through
// the sequence's block table, in ferrum's layout [blocks, nkv, bs, hd] or vLLM's (key [blocks, nkv,
// hd / x, bs, x], value [blocks, nkv, hd, bs]; x = 1 << p.x_shift).
// ADDR_AFFINE, ADDR_FERRUM, ADDR_VLLM: core/kinds.inc's TS_KV_ADDRS (kinds.glsl).
// p.seqs: how work group z finds its sequence: its query rows, the position of its first row and its
// kv length (core/kinds.inc's TS_SEQ_MODES, kinds.glsl):
//   SEQS_UNIFORM  z = batch: q_len rows from pos_offset, kv_len keys (or kv_lens[kv_len_index])
//   SEQS_LENS     z = sequence: q_len rows ending at its kv length lens[z] (decode, prefill)
//   SEQS_VARLEN   sequence z: rows cu[z] .. cu[z+1] from position seq2[z], kv = seq2[z] + rows
//   SEQS_FA2      as SEQS_VARLEN, kv = seq2[z] and rows aligned to its end (FlashAttention-2)
// The ragged modes (VARLEN, FA2) run one flat list of row blocks, every sequence's in order, and each
// work group finds its sequence on the device (ragged_block): the grid is sized from the parameters
// (the most blocks total_q rows of nseqs sequences can make), never from the lengths, so a plan runs
// again on new cu_seqlens; a block past the step's leaves at once. Their pieces' states are kept per
// output row, and the combine runs one work group per (token, head).
//   SEQS_TILES    z = tile: up to 4 rows of sequence tile_seqs[z] from row tile_starts[z]
// p.kv_kind: KERNEL_ATTN_KV's pool elements, a KV_DTYPE_* (core/kinds.inc's TS_KV_DTYPES).

layout(local_size_x = WG) in;
BUF_IN(0, q)
#if defined(KERNEL_ATTN_KV)
layout(std430, binding = 1) readonly buffer Buf1 { uint k1[]; };
layout(std430, binding = 2) readonly buffer Buf2 { uint k2[]; };
layout(std430, binding = 3) readonly buffer Buf3 { uint v[]; };
#else
BUF_IN(1, k1)
BUF_IN(2, k2)
BUF_IN(3, v)
#endif
BUF_OUT(4, o)
BUF_IDX(5, kv_lens)  // SEQS_UNIFORM: per-cache lengths; SEQS_LENS: lengths; varlen: cu_seqlens_q
layout(std430, binding = 6) buffer Part { float part[]; };  // the pieces' states (scratch, float)
BUF_IDX(7, seq2)          // varlen: pos_offsets or (FA2) seq_lens
BUF_IDX(8, tables)        // paged: block tables [sequences, width]
layout(std430, binding = 9) writeonly buffer Lse { float lse[]; };  // SEQS_FA2: [nh, total_q]
layout(std430, binding = 10) readonly buffer KScale { float k_scales[]; };  // KV I8 / F8: [blocks, nkv, bs]
layout(std430, binding = 11) readonly buffer VScale { float v_scales[]; };
BUF_IDX(12, tile_seqs)    // SEQS_TILES
BUF_IDX(13, tile_starts)
#include "attention_push.glsl"  // the push block p

#define NEG_INF uintBitsToFloat(0xff800000u)
#define QNAN uintBitsToFloat(0x7fc00000u)
#define NEG_ZERO uintBitsToFloat(0x80000000u)  // the weight of a key the row does not see

// Sequence z as this work group sees it: n query rows, the first at position `first` (negative for
// FA2 rows before the kv starts), kv keys, its first row in the flat q (varlen) and its block table.
struct Seq {
  uint n, kv, row0, table;
  int first;
};

Seq seq_of(uint z) {
  Seq s;
  s.table = z;
  s.row0 = 0u;
  if (p.seqs == SEQS_UNIFORM) {
    s.n = p.q_len;
    s.kv = p.kv_len_index != 0xffffffffu ? kv_lens[p.kv_len_index] : p.kv_len;
    s.first = int(p.pos_offset);
  } else if (p.seqs == SEQS_LENS) {
    s.n = p.q_len;
    s.kv = kv_lens[z];
    s.first = int(s.kv) - int(p.q_len);
  } else if (p.seqs == SEQS_TILES) {
    const uint sq = tile_seqs[z], start = tile_starts[z], end = kv_lens[sq + 1u];
    s.table = sq;
    s.row0 = start;
    s.n = min(4u, end - start);
    s.first = int(seq2[sq] + (start - kv_lens[sq]));
    s.kv = seq2[sq] + (end - kv_lens[sq]);
  } else {
    s.row0 = kv_lens[z];
    s.n = kv_lens[z + 1u] - s.row0;
    if (p.seqs == SEQS_FA2) {
      s.kv = seq2[z];
      s.first = int(s.kv) - int(s.n);
    } else {
      s.first = int(seq2[z]);
      s.kv = seq2[z] + s.n;
    }
  }
  return s;
}

// Query (and output) row of head h, query qi: [batch, heads, q_len], token-major [batch, q_len,
// heads] (p.q_tm), or varlen's [tokens, heads].
uint q_row(Seq s, uint z, uint h, uint qi) {
  if (p.seqs >= SEQS_VARLEN) return (s.row0 + qi) * p.nh + h;
  if (p.q_tm != 0u) return (z * p.q_len + qi) * p.nh + h;
  return (z * p.nh + h) * p.q_len + qi;
}

// The keys [lo, hi) query qi of sequence s sees.
uvec2 visible_keys(Seq s, uint qi) {
  const int pos = s.first + int(qi);
  int hi = int(s.kv), lo = 0;
  if (p.causal != 0u) hi = clamp(pos + 1, 0, hi);
  if (p.window != 0u) lo = max(0, pos + 1 - int(p.window));
  return uvec2(uint(lo), uint(max(lo, hi)));
}

bool ragged() { return p.seqs == SEQS_VARLEN || p.seqs == SEQS_FA2; }

// The state of piece s of a row in `part`: m, l, then acc[dv]. Rows are numbered per work-group slot
// (z, kv head) and row r of it, or in the ragged modes by their output row.
uint part_row(Seq sq, uint z, uint kvh, uint r) {
  if (ragged()) return q_row(sq, z, kvh * p.group + r / sq.n, r % sq.n);
  return (z * p.nkv + kvh) * p.rows_cap + r;
}
uint part_offset(uint row, uint s) { return (row * p.npieces + s) * (p.dv + 2u); }

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
  float m = NEG_INF;
  for (uint s = 0; s < p.npieces; ++s) m = max(m, part[first + s * stride]);
  for (uint d = gl_LocalInvocationIndex; d < p.dv; d += WG) {
    float l = 0.0, acc = 0.0;
    for (uint s = 0; s < p.npieces; ++s) {  // key order: the same sums every run
      const uint u = first + s * stride;
      // 0 for a piece that saw no key (m = -inf, l = acc = 0); a piece that saw a NaN score has l
      // NaN, which its weight carries into the row's (0 * NaN included).
      const float w = part[u] == NEG_INF ? 0.0 : exp(part[u] - m);
      l = fma(part[u + 1u], w, l);
      acc = fma(part[u + 2u + d], w, acc);
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
float kv_elem(uint w, uint e) {
  if (p.kv_kind == KV_DTYPE_F16) return unpackHalf2x16(w >> ((e & 1u) * 16u)).x;
  if (p.kv_kind == KV_DTYPE_BF16) return uintBitsToFloat(((w >> ((e & 1u) * 16u)) & 0xffffu) << 16);
  const uint b = (w >> ((e & 3u) * 8u)) & 0xffu;
  if (p.kv_kind == KV_DTYPE_I8) return float(bitfieldExtract(int(b), 0, 8));  // sign-extends bit 7
  // F8_E4M3 (fn): no infinities, exponent 15 with mantissa 7 is NaN; subnormals at 2^-9 steps.
  const uint ex = (b >> 3) & 15u, m = b & 7u;
  const float mag = ex == 15u && m == 7u ? uintBitsToFloat(0x7fc00000u)
                    : ex == 0u            ? float(m) * 0.001953125
                                          : ldexp(1.0 + float(m) * 0.125, int(ex) - 7);
  return (b & 0x80u) != 0u ? -mag : mag;
}
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
  if (p.addr == ADDR_AFFINE) {
    skb[t] = slot * p.k1_hs + j * p.k1_rs;
    svb[t] = slot * p.v_hs + j * p.v_rs;
    return;
  }
  const uint blk = tables[s.table * p.width + j / p.block_size], at = j % p.block_size;
  const uint head = blk * p.nkv + kvh;  // (block, kv head): block_size x head_dim elements
  if (p.addr == ADDR_FERRUM) {
    skb[t] = (head * p.block_size + at) * p.dqk;
    svb[t] = skb[t];
  } else {
    skb[t] = head * p.dqk * p.block_size + (at << p.x_shift);
    svb[t] = head * p.dqk * p.block_size + at;
  }
#if defined(KERNEL_ATTN_KV)
  if (kv_scaled(p.kv_kind)) {
    sks[t] = k_scales[head * p.block_size + at];
    svs[t] = v_scales[head * p.block_size + at];
  } else {
    sks[t] = 1.0;
    svs[t] = 1.0;
  }
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
