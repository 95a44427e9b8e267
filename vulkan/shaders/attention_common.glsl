// What every attention kernel shares (attention.comp's engine and attention_decode.comp's decode
// kernel): the bindings other than K, V and k2 (each kernel declares those as it reads them), the push
// block, how a work group finds its sequence and rows, and the pool elements' decoding.
#ifndef TS_ATTENTION_COMMON_GLSL
#define TS_ATTENTION_COMMON_GLSL
#include "dtype.glsl"
#include "kinds.glsl"

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

BUF_IN(0, q)
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

// Where key j of sequence s lives for kv head kvh (slot = z * nkv + kvh): the first elements of its
// K row and V row, and for a paged pool the index (block, kv head, slot) of its scales; ~0 for
// affine rows, which have none. vLLM's rows start at their first channel (key_elem spreads the rest).
struct KvRow {
  uint k, v, scale;
};
KvRow kv_row(Seq s, uint slot, uint kvh, uint j) {
  KvRow r;
  if (p.addr == ADDR_AFFINE) {
    r.k = slot * p.k1_hs + j * p.k1_rs;
    r.v = slot * p.v_hs + j * p.v_rs;
    r.scale = 0xffffffffu;
    return r;
  }
  const uint blk = tables[s.table * p.width + j / p.block_size], at = j % p.block_size;
  const uint head = blk * p.nkv + kvh;  // (block, kv head): block_size x head_dim elements
  r.scale = head * p.block_size + at;
  if (p.addr == ADDR_FERRUM) {
    r.k = r.scale * p.dqk;
    r.v = r.k;
  } else {
    r.k = head * p.dqk * p.block_size + (at << p.x_shift);
    r.v = head * p.dqk * p.block_size + at;
  }
  return r;
}

// Element e of a pool of `kind` elements (a KV_DTYPE_*) packed in 32-bit words.
float kv_elem_of(uint kind, uint w, uint e) {
  if (kind == KV_DTYPE_F16) return unpackHalf2x16(w >> ((e & 1u) * 16u)).x;
  if (kind == KV_DTYPE_BF16) return uintBitsToFloat(((w >> ((e & 1u) * 16u)) & 0xffffu) << 16);
  const uint b = (w >> ((e & 3u) * 8u)) & 0xffu;
  if (kind == KV_DTYPE_I8) return float(bitfieldExtract(int(b), 0, 8));  // sign-extends bit 7
  // F8_E4M3 (fn): no infinities, 0x7f / 0xff are NaN. A normal code's exponent and mantissa shift
  // into an F32's fields with the bias moved from 7 to 127 (two integer operations where ldexp took a
  // per-element exponent scaling, as opencl/kernels/kv.h decodes); exponent 0 is m x 2^-9, computed
  // rather than built as an F32 subnormal, which a GPU may flush.
  const uint mag = b & 0x7fu;
  const float x = mag >= 8u ? uintBitsToFloat((mag << 20) + (120u << 23)) : float(mag) * 0.001953125;
  const float y = mag == 0x7fu ? uintBitsToFloat(0x7fc00000u) : x;
  return (b & 0x80u) != 0u ? -y : y;
}
#endif
