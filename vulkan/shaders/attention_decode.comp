#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
// Attention for a few query rows per (sequence, kv head): a decode step's GQA group. The engine's
// other kernel (attention.comp) stages every key tile in shared memory with scalar loads, then lets a
// few invocations run the softmax while the rest wait: on a GPU that leaves the memory system nearly
// idle. Here each invocation reads 8 elements of a K row and of a V row straight into registers with
// one load each (16 bytes, 8 for one-byte pools, two 16-byte loads for F32), all NR rounds of a tile issued before any is used, so a work group of 128 has
// NR x 2 KiB (F16) of K, then of V, in flight; the V loads are issued before the softmax, which
// hides behind them.
//   KERNEL_ATTN_DECODE     K / V in the activation dtype (F32, F16, BF16)
//   KERNEL_ATTN_DECODE_KV  pools of KV_KIND elements (F16, BF16, or I8 / F8_E4M3 with their scales)
// What the planner (vulkan/attention/attention_engine.cpp) guarantees: head_dim dqk = dv in {64, 128,
// 256}, one key part, rows starting at multiples of 8 elements (so a lane's 8 elements lie in one
// 16-byte word, or two for F32), ferrum or affine rows (not vLLM's), per-sequence modes (not the
// ragged ones), subgroup arithmetic with a subgroup size dividing KT.
// Lanes: lpk = dqk / 8 lanes share a key row, lane c of them owning elements [8c, 8c + 8); kpr =
// 128 / lpk keys a round, KT = NR x kpr keys a tile. A lane's q slice (8 elements of R rows) and its
// output slice stay in registers for the whole work group.
// Per tile, three barriers: K partial dots to shared memory, then (key, row) pairs sum them into
// scores and take the tile's max per row with subgroupMax, then the weights and their sums per row
// (subgroupAdd); every lane then rescales its slice and adds its keys' weighted V elements. The
// special values follow attention.comp exactly: a NaN score stays out of the max and makes the row's
// sum NaN, a +Inf max is NaN, a key the row does not see weighs -0.0 and is skipped (its V may be
// NaN), a row whose visible scores are all -Inf so far weighs nothing.
// Key split and combine: as attention.comp's (the same `part` states, merged by its combine).
#include "attention_common.glsl"

#define WG 128
#define R 4     // query rows per work group
#define EPL 8   // elements of a row per lane
#define NR_MAX 8  // rounds of loads per tile at most: the arrays' sizes
#define KT_MAX (NR_MAX * WG / 8)                  // keys per tile at the smallest head (64: lpk 8)
#define PAIRS_MAX (R * KT_MAX / WG)               // (key, row) pairs per lane at most
#define RED_SIZE (R * (NR_MAX * WG + KT_MAX))     // the partial dots, a padding word per (key, row)
// Rounds of loads per tile (2, 4 or 8; the planner's, TOUCHSTONE_VULKAN_ATTN_ROUNDS to tune): the
// bytes a lane has in flight against the registers that hold them.
layout(constant_id = 1) const uint NR = 8u;

layout(local_size_x = WG) in;
layout(std430, binding = 1) readonly buffer Buf1 { uvec4 k1[]; };
layout(std430, binding = 3) readonly buffer Buf3 { uvec4 v[]; };
// The same rows as 8-byte words: a lane's 8 one-byte elements (I8, F8_E4M3 pools) are one word, where
// a 16-byte load would bring its neighbour's 8 too and hold them in registers for the whole round.
layout(std430, binding = 1) readonly buffer Buf1h { uvec2 k1h[]; };
layout(std430, binding = 3) readonly buffer Buf3h { uvec2 vh[]; };

#define KIND_F32 0xffu  // not a KV_DTYPE: plain F32 rows
// 16-byte words a lane loads per row per round: two for F32 rows, else one (a pool is never F32).
#if defined(KERNEL_ATTN_DECODE) && defined(DT_F32)
#define RAW 2
#else
#define RAW 1
#endif
#if defined(KERNEL_ATTN_DECODE_KV)
// The pool's kind as a specialization constant (the planner sets it to p.kv_kind): the driver folds
// every other kind's decode away, and a pipeline per kind holds only its own registers.
layout(constant_id = 0) const uint KV_KIND = 0u;
#define ELEM_KIND KV_KIND
#elif defined(DT_F32)
#define ELEM_KIND KIND_F32
#elif defined(DT_F16)
#define ELEM_KIND KV_DTYPE_F16
#else
#define ELEM_KIND KV_DTYPE_BF16
#endif

shared float red[RED_SIZE];  // K partial dots [key][row][lane of the key + 1]; at the end the output slices
shared float sp[R * KT_MAX];  // the tile's weights [row][key]
shared float smx[R * KT_MAX / 4], ssum[R * KT_MAX / 4];  // per (row, subgroup): the tile's max, sum
shared uvec2 srange[R];
shared uint skb[KT_MAX], svb[KT_MAX];
shared float sks[KT_MAX], svs[KT_MAX];

uint elem_bytes() { return ELEM_KIND == KIND_F32 ? 4u : kv_elem_bytes(ELEM_KIND); }

// Elements [e, e + 8) of a pool (e a multiple of 8): the 16-byte word holding them, and for F32 the
// next one; one-byte elements as an 8-byte word in raw[0].xy. Nothing here uses the words: a lane's
// loads of a tile all go out before the first returns.
void load8(bool is_k, uint e, out uvec4 raw[RAW]) {
  if (elem_bytes() == 1u) {  // a specialization constant's branch: one of them is compiled
    raw[0] = uvec4(is_k ? k1h[e >> 3] : vh[e >> 3], 0u, 0u);
  } else {
    const uint w = (e * elem_bytes()) >> 4;
    raw[0] = is_k ? k1[w] : v[w];
  }
#if RAW == 2
  const uint w2 = ((e * elem_bytes()) >> 4) + 1u;
  raw[1] = is_k ? k1[w2] : v[w2];
#endif
}

// The 8 elements load8 brought, as floats.
void decode8(uvec4 raw[RAW], out float x[EPL]) {
  const uint kind = ELEM_KIND;
  const uvec4 lo = raw[0];
#if RAW == 2
  if (kind == KIND_F32) {
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      x[i] = uintBitsToFloat(lo[i]);
      x[i + 4u] = uintBitsToFloat(raw[1][i]);
    }
    return;
  }
#endif
  if (kind == KV_DTYPE_F16) {
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      const vec2 h = unpackHalf2x16(lo[i]);
      x[2u * i] = h.x;
      x[2u * i + 1u] = h.y;
    }
  } else if (kind == KV_DTYPE_BF16) {
    [[unroll]] for (uint i = 0u; i < 4u; ++i) {
      x[2u * i] = uintBitsToFloat(lo[i] << 16);
      x[2u * i + 1u] = uintBitsToFloat(lo[i] & 0xffff0000u);
    }
  } else {
    [[unroll]] for (uint i = 0u; i < 8u; ++i) {
      const uint word = i < 4u ? lo.x : lo.y;
      x[i] = kv_elem_of(kind, word, i);  // I8 or F8_E4M3: KV_KIND folds the other away
    }
  }
}

// a[i] for a row index uniform over the work group's pairs but not known at compile time, by
// selects (a register array indexed at run time would go to memory).
float pick(float a[R], uint i) {
  float x = a[0];
  [[unroll]] for (uint k = 1u; k < R; ++k) x = i == k ? a[k] : x;
  return x;
}

// Key j of the tile's slot t: where its rows start and their scales, fetched into registers (by
// invocations t < KT, keys below j_end) a tile ahead of staging them in shared memory, so that the
// table's and the scales' latency hides behind the tile before.
struct Staged {
  uint k, v;
  float ks, vs;
};
Staged fetch_row(uint t, uint kt, uint j, uint j_end, Seq s, uint slot, uint kvh) {
  Staged r = Staged(0u, 0u, 1.0, 1.0);
  if (t >= kt || j >= j_end) return r;
  const KvRow kr = kv_row(s, slot, kvh, j);
  r.k = kr.k;
  r.v = kr.v;
  if (ELEM_KIND != KIND_F32 && kv_scaled(ELEM_KIND) && kr.scale != 0xffffffffu) {
    r.ks = k_scales[kr.scale];
    r.vs = v_scales[kr.scale];
  }
  return r;
}
void stage_row(uint t, uint kt, Staged r) {
  if (t >= kt) return;
  skb[t] = r.k;
  svb[t] = r.v;
  sks[t] = r.ks;
  svs[t] = r.vs;
}

void main() {
  const uint t = gl_LocalInvocationIndex;
  const uint kvh = gl_WorkGroupID.y, piece = gl_WorkGroupID.x % p.npieces, blk = gl_WorkGroupID.x / p.npieces;
  const uint z = gl_WorkGroupID.z;
  const Seq sq = seq_of(z);
  const uint nrows = p.group * sq.n, r0 = blk * R;
  if (r0 >= nrows) return;  // the whole work group: this sequence has fewer rows than the grid's
  const uint slot = z * p.nkv + kvh;

  // The lanes' shape for this head size (powers of two: shifts, no division).
  const uint lpk = p.dqk / EPL, lpk_log = findMSB(lpk), kpr = WG / lpk;
  const uint kt = NR * kpr, kt_log = findMSB(kt), pairs = R * kt / WG, sgs_per_row = kt / gl_SubgroupSize;
  const uint c = t & (lpk - 1u), ks = t >> lpk_log;  // this lane's slice of a row and its key in a round

  uvec2 vis[R];
  uint j_begin = 0xffffffffu, j_end = 0u;
  [[unroll]] for (uint rr = 0u; rr < R; ++rr) {
    const uint r = r0 + rr;
    vis[rr] = r < nrows ? visible_keys(sq, r % sq.n) : uvec2(0u);
    if (vis[rr].x < vis[rr].y) {
      j_begin = min(j_begin, vis[rr].x);
      j_end = max(j_end, vis[rr].y);
    }
  }
  if (p.npieces > 1u) {  // a piece outside [j_begin, j_end) runs no tile and writes an empty state
    j_begin = max(j_begin, piece * p.piece_keys);
    j_end = min(j_end, (piece + 1u) * p.piece_keys);
  }
  [[unroll]] for (uint rr = 0u; rr < R; ++rr)
    if (t == rr) srange[rr] = vis[rr];  // a constant index: vis stays in registers

  float qv[R][EPL], acc[R][EPL], m[R], l[R];
  [[unroll]] for (uint rr = 0u; rr < R; ++rr) {
    const uint r = r0 + rr;
    uint base = 0u;
    if (r < nrows) base = p.q_off + q_row(sq, z, kvh * p.group + r / sq.n, r % sq.n) * p.dqk + c * EPL;
    [[unroll]] for (uint e = 0u; e < EPL; ++e) {
      float x = 0.0;
      if (r < nrows) x = ld(q[base + e]);  // an if, not ?:, so no load is ever speculated
      qv[rr][e] = x;
      acc[rr][e] = 0.0;
    }
    m[rr] = NEG_INF;
    l[rr] = 0.0;
  }
  stage_row(t, kt, fetch_row(t, kt, j_begin + t, j_end, sq, slot, kvh));
  barrier();

  for (uint j0 = j_begin; j0 < j_end; j0 += kt) {
    const Staged next = fetch_row(t, kt, j0 + kt + t, j_end, sq, slot, kvh);
    // K: every round's loads first, then their partial dots. A round's key past j_end reads key j0's
    // row instead (a row that exists): no branch around a load, and its scores are never seen.
    uvec4 kraw[NR_MAX][RAW];
    [[unroll]] for (uint i = 0u; i < NR; ++i) {
      const uint kk = i * kpr + ks, e = (j0 + kk < j_end ? skb[kk] : skb[0]) + c * EPL;
      load8(true, e, kraw[i]);
    }
    [[unroll]] for (uint i = 0u; i < NR; ++i) {
      const uint kk = i * kpr + ks;
      float x[EPL];
      decode8(kraw[i], x);
      // The key's scale multiplies the partial dots, but an infinite one (a hand-built pool) goes
      // into each element first, as the reference dequantizes: `0 x Inf` is NaN there, and partial
      // dots that share a sign would otherwise make a plain +-Inf (a -Inf score masks the key).
      const float sk = sks[kk];
      const bool inf_scale = isinf(sk);
      [[dont_flatten]] if (inf_scale) {
        [[unroll]] for (uint e = 0u; e < EPL; ++e) x[e] *= sk;
      }
      const float fold = inf_scale ? 1.0 : sk;
      [[unroll]] for (uint rr = 0u; rr < R; ++rr) {
        float d = 0.0;
        [[unroll]] for (uint e = 0u; e < EPL; ++e) d = fma(qv[rr][e], x[e], d);
        red[(kk * R + rr) * (lpk + 1u) + c] = d * fold;
      }
    }
    // V: issued now, used after the softmax (keys past j_end as K's, never weighed). Its scales are
    // taken now too: the next tile's staging overwrites the rows before the weights apply.
    uvec4 vraw[NR_MAX][RAW];
    float vsc[NR_MAX];
    [[unroll]] for (uint i = 0u; i < NR; ++i) {
      const uint kk = i * kpr + ks, e = (j0 + kk < j_end ? svb[kk] : svb[0]) + c * EPL;
      load8(false, e, vraw[i]);
      vsc[i] = svs[kk];
    }
    barrier();

    // Pairs (row rr, key kk) = pi = rr * kt + kk, pi = t + WG * i: a subgroup's pairs share a row.
    float s[PAIRS_MAX];
    bool seen[PAIRS_MAX];
    [[unroll]] for (uint i = 0u; i < PAIRS_MAX; ++i) {
      if (i == pairs) break;  // uniform over the work group
      const uint pi = t + WG * i, rr = pi >> kt_log, kk = pi & (kt - 1u), j = j0 + kk;
      // The key's lpk partial dots (8, 16 or 32), 8 loads at a time in flight.
      const uint at = (kk * R + rr) * (lpk + 1u);
      float part8[8];
      [[unroll]] for (uint k = 0u; k < 8u; ++k) part8[k] = 0.0;
      [[unroll]] for (uint k0 = 0u; k0 < 32u; k0 += 8u) {
        if (k0 == lpk) break;
        [[unroll]] for (uint k = 0u; k < 8u; ++k) part8[k] += red[at + k0 + k];
      }
      const float dot = ((part8[0] + part8[1]) + (part8[2] + part8[3])) + ((part8[4] + part8[5]) + (part8[6] + part8[7]));
      const uvec2 kr = srange[rr];
      seen[i] = j < j_end && j >= kr.x && j < kr.y;
      s[i] = dot * p.scale;
      const float mx = subgroupMax(seen[i] && !isnan(s[i]) ? s[i] : NEG_INF);
      if (subgroupElect()) smx[pi / gl_SubgroupSize] = mx;
    }
    // The next tile's rows: every lane has read this tile's (its K and V loads and V scales are issued).
    stage_row(t, kt, next);
    barrier();

    float m_new[R];
    [[unroll]] for (uint rr = 0u; rr < R; ++rr) {
      float mx = m[rr];
      for (uint g = 0u; g < sgs_per_row; ++g) mx = max(mx, smx[rr * sgs_per_row + g]);
      m_new[rr] = mx;
    }
    [[unroll]] for (uint i = 0u; i < PAIRS_MAX; ++i) {
      if (i == pairs) break;
      const uint pi = t + WG * i, rr = pi >> kt_log;
      const float mn = pick(m_new, rr);
      const bool nan_score = seen[i] && isnan(s[i]);
      // A visible key's weight is multiplied in even when it is +0 (a -Inf score, an underflow), as the
      // reference's p_j v_j is: 0 x NaN is NaN.
      const float w = !seen[i] || mn == NEG_INF ? NEG_ZERO : nan_score ? QNAN : exp(s[i] - mn);
      sp[pi] = w;
      const float sum = subgroupAdd(seen[i] && !nan_score && mn != NEG_INF ? w : 0.0);
      const bool any_nan = subgroupMax(nan_score ? 1u : 0u) != 0u;  // arithmetic, not vote: one feature fewer
      if (subgroupElect()) ssum[pi / gl_SubgroupSize] = any_nan ? QNAN : sum;
    }
    barrier();

    [[unroll]] for (uint rr = 0u; rr < R; ++rr) {
      float sum = 0.0;
      for (uint g = 0u; g < sgs_per_row; ++g) sum += ssum[rr * sgs_per_row + g];
      const float mn = m_new[rr];
      const float corr = mn == NEG_INF ? 1.0 : exp(m[rr] - mn);  // 0 while the row had seen nothing
      // A +Inf score is the max, and the reference's exp(s - max) is exp(Inf - Inf) = NaN.
      l[rr] = isnan(sum) || (isinf(mn) && mn > 0.0) ? QNAN : l[rr] * corr + sum;
      m[rr] = mn;
      [[unroll]] for (uint e = 0u; e < EPL; ++e) acc[rr][e] *= corr;
    }
    [[unroll]] for (uint i = 0u; i < NR; ++i) {
      const uint kk = i * kpr + ks;
      if (j0 + kk >= j_end) break;
      float x[EPL];
      decode8(vraw[i], x);
      [[unroll]] for (uint rr = 0u; rr < R; ++rr) {
        const float w = sp[rr * kt + kk];
        if (floatBitsToUint(w) == 0x80000000u) continue;  // a hidden key (-0.0): nothing, even NaN
        const float wv = w * vsc[i];
        [[unroll]] for (uint e = 0u; e < EPL; ++e) acc[rr][e] = fma(wv, x[e], acc[rr][e]);
      }
    }
  }

  // Each lane holds its keys' share of its slice: sum the kpr shares of every (row, column). Every
  // lane has passed the last tile's barriers since it last read `red`.
  [[unroll]] for (uint rr = 0u; rr < R; ++rr)
    [[unroll]] for (uint e = 0u; e < EPL; ++e) red[(ks * R + rr) * p.dqk + c * EPL + e] = acc[rr][e];
  barrier();
  for (uint oi = t; oi < R * p.dqk; oi += WG) {
    const uint rr = oi >> findMSB(p.dqk), d = oi & (p.dqk - 1u), r = r0 + rr;
    if (r >= nrows) break;
    float a = 0.0;
    for (uint k = 0u; k < kpr; ++k) a += red[(k * R + rr) * p.dqk + d];
    const float lr = pick(l, rr);
    if (p.npieces > 1u) {
      const uint u = part_offset(part_row(sq, z, kvh, r), piece);
      if (d == 0u) {
        part[u] = pick(m, rr);
        part[u + 1u] = lr;
      }
      part[u + 2u + d] = a;
    } else {
      const uint base = p.o_off + q_row(sq, z, kvh * p.group + r / sq.n, r % sq.n) * p.dv;
      o[base + d] = st(lr != 0.0 ? a / lr : 0.0);
    }
  }
}
