// Flash attention with an online softmax over key tiles held in local memory (FlashAttention-2 form),
// the one attention engine of every OpenCL attention op (core, paged and kv families).
// A work-group takes one (item, kv head, block of bq query rows). An item is a run of n query
// positions of one sequence: the batch entry of the core ops, or (decoded on the device from the
// lengths, item_of) a piece of a decode batch, a prefill or a varlen sequence, so a ragged batch is
// one dispatch.
// The item's rows are the query heads of the kv head's GQA group times its n positions, flattened as
// row = g * n + i, so a K/V tile is read once for the whole group (decode reads each K/V byte once).
// Row (head h, position i) of the item is q / out row row0 + h * head_rows + i * pos_rows (head-major
// [b, nh, n, d] or token-major [tokens, nh, d]).
// Scores: scale * (q[:dk1] . k1[j] + q[dk1:] . k2[j]); values v[j] (dv columns). Plain attention has
// dk2 = 0; MLA's absorbed form is k1 = v = the compressed cache and k2 = the rope keys.
// Visibility (docs/catalog.md): row at position P = first + i sees j < kv_len, j <= P when causal, and
// j >= P + 1 - window when window > 0. Only keys some row of the block sees are ever loaded.
// K/V addressing (-DPAGED): 0 affine, row j at base + j * stride; 1 a ferrum pool, 2 vLLM's pools:
// position j is slot j % block_size of block table[j / block_size]; each tile first finds its rows'
// offsets (and, -DSCALED, their I8 / F8_E4M3 scales) once, then loads dequantize into local memory.
// -DKV_ANY (kv.h): the pool's element type is kv_kind, chosen at run time.
// Local memory (floats): qs[bq][dk], ks[bk][dk], vs[bk][dv], ps[bq][bk], and the rows' running max,
// sum and rescale factor. All row work is in vectors of VW floats (VW divides dk1, dk2 and dv).
// A work-item owns output chunks lid + t * L (t < MAXO) of the bq x (dv / VW) block, in registers.
// GPUs: L = 128 work-items, VW 4. CPU drivers: L = 1, VW 16 (the work-item's loops run as SIMD code).
// Key split (flash decoding): with piece > 0, work-group p of dimension 0 takes only keys
// [p * piece, (p + 1) * piece) and leaves each row's state (max m, sum l, unnormalised acc) in
// part_ml / part_acc; flash_combine then merges the pieces of each row into the output.
// -DLSE: also lse[h * lse_rows + t] = m + log(l) of token-major row t * nh + h.
// Arguments: the tensors and one local buffer by position, the scalars by name in AttnArgs
// (attention_args.h, the list the planner packs from), read once per work-item.
#define vec_t FLOATN(VW)
#define VL(p, i) VLOADN(VW)(0, (p) + (i))
#define VS(v, p, i) VSTOREN(VW)((v), 0, (p) + (i))
#include "kv.h"
#include "attention_args.h"
#ifndef PAGED
#define PAGED 0
#endif
#if PAGED == 2 && defined(KV_ANY)
#error "vLLM's pools are read in the activation dtype"
#endif

inline void visible_range(int i, int kv_len, int first, int causal, int window, int* lo, int* hi) {
  const int p = first + i;
  *hi = causal ? min(p + 1, kv_len) : kv_len;
  *lo = window > 0 ? max(0, p + 1 - window) : 0;
}

// out = acc / l, or 0 where the row saw no key (l == 0), rounded once to the output dtype. A NaN l
// (the row saw a NaN score) divides through: the row is NaN, as the reference's.
inline void store_out(__global st_t* out, size_t base, vec_t acc, float l) {
  const vec_t o = l != 0.0f ? acc / l : (vec_t)(0.0f);
  float part[VW];
  VS(o, part, 0);
  for (int x = 0; x < VW; ++x) ST(out, base + x, part[x]);
}

// The natural log of a row's sum of exp(scores): -inf when it saw no key.
inline float row_lse(float m, float l) { return l != 0.0f ? m + log(l) : -INFINITY; }

// Horizontal sum by halving: log2(VW) vector adds.
inline float hsum(vec_t v) {
#if VW == 16
  const float8 h8 = v.lo + v.hi;
  const float4 h4 = h8.lo + h8.hi;
#elif VW == 8
  const float4 h4 = v.lo + v.hi;
#elif VW == 4
  const float4 h4 = v;
#endif
#if VW >= 4
  const float2 h2 = h4.lo + h4.hi;
  return h2.x + h2.y;
#elif VW == 2
  return v.x + v.y;
#else
  return v;
#endif
}

// How work-group z finds its item (attention_engine.h's SeqMode): the plan holds no item table, only
// how many items the parameters allow at most; each work-group decodes its own from the per-sequence
// tensors, so a step with new lengths runs on the same plan, and an item past the step's leaves.
// The modes are core/kinds.inc's TS_SEQ_MODES (kinds.h):
//   SEQ_UNIFORM  batch entry z: q_len positions from pos_offset, kv_len keys (or kv_lens[kv_len_item])
//   SEQ_LENS     z / per: sequence of kv length lens[s], its q_len positions ending there, by runs
//   SEQ_VARLEN   the ragged batch's runs in order: rows cu[s] .. cu[s+1] from position second[s]
//   SEQ_FA2      as SEQ_VARLEN, kv = second[s] and the rows aligned to its end (FlashAttention-2)
//   SEQ_TILES    tile z: up to `run` rows of sequence tile_seqs[z] from row tile_starts[z]

// Item z of a per-sequence mode: its sequence, first q / out row, positions, first position and kv
// length; false for an item past the step's (the whole work-group leaves). Rows are token-major
// (row0 = token * pos_rows) but for SEQ_LENS (row0 = s * seq_rows + i0 * pos_rows).
inline bool item_of(int z, int mode, __global const uint* lens, __global const uint* second,
                    __global const uint* tile_seqs, __global const uint* tile_starts, int nseq, int q_len, int run,
                    int seq_rows, int pos_rows, int* seq, size_t* row0, int* n, int* first, int* kv) {
  if (mode == SEQ_LENS) {
    const int per = (q_len + run - 1) / run, s = z / per, i0 = (z % per) * run;
    *seq = s, *n = min(run, q_len - i0), *kv = (int)lens[s], *first = *kv - q_len + i0;
    *row0 = (size_t)s * seq_rows + (size_t)i0 * pos_rows;
    return true;
  }
  if (mode == SEQ_TILES) {
    const int s = (int)tile_seqs[z], r = (int)tile_starts[z], end = (int)lens[s + 1], start = (int)lens[s];
    *seq = s, *n = min(run, end - r), *first = (int)second[s] + r - start, *kv = (int)second[s] + end - start;
    *row0 = (size_t)r * pos_rows;
    return true;
  }
  // SEQ_VARLEN / SEQ_FA2: walk the sequences' runs (a few dozen sequences: cheap beside the keys).
  int left = z;
  for (int s = 0; s < nseq; ++s) {
    const int start = (int)lens[s], rows = (int)lens[s + 1] - start, runs = (rows + run - 1) / run;
    if (left >= runs) {
      left -= runs;
      continue;
    }
    const int i0 = left * run;
    *seq = s, *n = min(run, rows - i0), *row0 = (size_t)(start + i0) * pos_rows;
    *kv = mode == SEQ_FA2 ? (int)second[s] : (int)second[s] + rows;
    *first = (mode == SEQ_FA2 ? *kv - rows : (int)second[s]) + i0;
    return true;
  }
  return false;
}

__kernel void flash_attn(__constant AttnArgs* args, __global const st_t* q, __global const kv_t* k1,
                         __global const kv_t* k2, __global const kv_t* v, __global st_t* out,
                         __global const uint* kv_lens, __global float* part, __global const uint* second,
                         __global const uint* tile_seqs, __global const uint* tile_starts,
                         __global const uint* tables, __global const float* k_scales,
                         __global const float* v_scales, __global float* lse, __local float* smem) {
  TS_ARGS_READ(TS_ATTN_ARGS)
  __global float* part_acc = part;
  __global float* part_ml = part + ml_off;
  const int dk = dk1 + dk2;
  __local float* qs = smem;
  __local float* ks = qs + TS_ATTN_PAD(bq * dk);
  __local float* vs = ks + TS_ATTN_PAD(bk * dk);
  __local float* ps = vs + TS_ATTN_PAD(bk * dv);
  __local float* st = ps + TS_ATTN_PAD(bq * bk);
  __local int* range = (__local int*)(st + TS_ATTN_PAD(3 * bq));
  __local int* kvrow = range + TS_ATTN_PAD(2 * bq);
  __local float* kvscl = (__local float*)(kvrow + TS_ATTN_PAD(2 * bk));
  const int lid = get_local_id(0), L = get_local_size(0);
  const int group = nh / nkv, nblk = get_num_groups(1) / nkv;
  const int kvh = get_group_id(1) / nblk, r0 = (get_group_id(1) % nblk) * bq, b = get_group_id(2);
  // This work-group's item: its sequence, first q / out row, positions, first position, kv length.
  // Every work-item of the group decodes the same item, so a group leaves whole (no barrier pending).
  int seq = b, n = q_len, first = pos_offset, kv = kv_len;
  size_t row0 = (size_t)b * nh * q_len;
  if (seq_mode != SEQ_UNIFORM) {
    if (!item_of(b, seq_mode, kv_lens, second, tile_seqs, tile_starts, nseq, q_len, run, seq_rows, pos_rows, &seq,
                 &row0, &n, &first, &kv))
      return;
  } else if (kv_len_item >= 0) {
    kv = (int)kv_lens[kv_len_item];
  }
  const int rows = group * n, nr = min(bq, rows - r0);
  if (nr <= 0) return;  // a block past a short item's rows: the whole work-group leaves, no barrier pending
  const int ck = dk / VW, cv = dv / VW, ck1 = dk1 / VW;  // row lengths in chunks
  __local float* row_m = st;
  __local float* row_l = st + bq;
  __local float* row_a = st + 2 * bq;
#define ROW(r) (row0 + (size_t)(kvh * group + (r) / n) * head_rows + (size_t)((r) % n) * pos_rows)

  // Each row's visible keys [range[2r], range[2r+1]), and those any row of the block sees: [j_lo, j_hi).
  int j_lo = kv, j_hi = 0;
  for (int r = 0; r < nr; ++r) {
    int lo, hi;
    visible_range((r0 + r) % n, kv, first, causal, window, &lo, &hi);
    if (lid == 0) { range[2 * r] = lo; range[2 * r + 1] = hi; }
    if (lo < hi) { j_lo = min(j_lo, lo); j_hi = max(j_hi, hi); }
  }
  const int np = get_num_groups(0), pc = get_group_id(0);
  if (piece > 0) {  // only this piece's keys; a piece no row sees loads nothing
    j_lo = max(j_lo, pc * piece);
    j_hi = min(j_hi, (pc + 1) * piece);
  }

  // Query row r of the block is head kvh * group + g at position i.
  for (int e = lid; e < nr * ck; e += L) {
    const int r = e / ck, c = e % ck;
    VS(LDN(VW, q, q_off + ROW(r0 + r) * dk + c * VW), qs, r * dk + c * VW);
  }
  for (int r = lid; r < nr; r += L) { row_m[r] = -INFINITY; row_l[r] = 0.0f; }
  vec_t acc[MAXO];
#pragma unroll
  for (int t = 0; t < MAXO; ++t) acc[t] = (vec_t)(0.0f);

#if PAGED
  // Element offsets, never pointer steps: a -DKV_ANY pool's kv_t is a byte, not its element.
  __global const kv_t* k1h = k1;
  __global const kv_t* vh = v;
  __global const uint* table = tables + (size_t)seq * table_width;
  __local int* krow = kvrow;        // element offset of each tile row's key (its kv head's) in k1
  __local int* vrow = kvrow + bk;   // and of its value in v
  __local float* kscl = kvscl;      // its scales (-DSCALED)
  __local float* vscl = kvscl + bk;
#ifdef SCALED
  const bool scaled = kv_scaled(kv_kind);
#endif
#else
  __global const kv_t* k1h = k1 + (size_t)seq * k1_bs + (size_t)kvh * k1_hs;
  __global const kv_t* k2h = k2 + (size_t)seq * k2_bs + (size_t)kvh * k2_hs;
  __global const kv_t* vh = v + (size_t)seq * v_bs + (size_t)kvh * v_hs;
#endif

  for (int j0 = j_lo; j0 < j_hi; j0 += bk) {
    const int nj = min(bk, j_hi - j0);
#if PAGED
    // Where each row of the tile lives: one table lookup per key row. Safe before the barrier below:
    // the previous tile read these only before its second barrier, which every work-item has passed.
    for (int jj = lid; jj < nj; jj += L) {
      const int j = j0 + jj, slot = j % block_size;
      const int blk = (int)table[j / block_size];
      krow[jj] = blk * kb_stride + kvh * k1_hs + slot * (PAGED == 2 ? kx : dk);
      vrow[jj] = blk * vb_stride + kvh * v_hs + slot * (PAGED == 2 ? 1 : dv);
#ifdef SCALED  // unscaled pools of a -DKV_ANY program weigh 1 (exact)
      kscl[jj] = scaled ? k_scales[(size_t)blk * sb_stride + (size_t)kvh * s_hs + slot] : 1.0f;
      vscl[jj] = scaled ? v_scales[(size_t)blk * sb_stride + (size_t)kvh * s_hs + slot] : 1.0f;
#endif
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile's readers are done
    // Consecutive work-items copy consecutive chunks of a row; (jj, c) steps by L without dividing.
    for (int jj = lid / ck, c = lid % ck; jj < nj;) {
#if PAGED == 0
      const vec_t x = c < ck1 ? KLDV(k1h, (size_t)(j0 + jj) * k1_rs + c * VW)
                              : KLDV(k2h, (size_t)(j0 + jj) * k2_rs + (c - ck1) * VW);
#elif PAGED == 1
      const vec_t x = KLDV(k1h, krow[jj] + c * VW);
#else
      // vLLM's key cache: channel d of a slot in group d / x (groups block_size * x apart), lane d % x;
      // a chunk spans VW / KXW groups (KXW = min(VW, x)). Its pools are in the activation dtype.
      float kp[VW];
      for (int u = 0; u < VW; u += KXW) {
        const int d = c * VW + u;
        VSTOREN(KXW)(LDN(KXW, k1h, krow[jj] + (d / kx) * block_size * kx + d % kx), 0, kp + u);
      }
      const vec_t x = VL(kp, 0);
#endif
#ifdef SCALED
      VS(x * kscl[jj], ks, jj * dk + c * VW);
#else
      VS(x, ks, jj * dk + c * VW);
#endif
      for (c += L; c >= ck; c -= ck) ++jj;
    }
#if PAGED == 2
    // vLLM's value cache holds channel d of every slot together: consecutive work-items take
    // consecutive slots of one channel (coalesced within a block).
    for (int e = lid; e < nj * dv; e += L) {
      const int jj = e % nj, d = e / nj;
#ifdef SCALED
      vs[jj * dv + d] = KLD(vh, vrow[jj] + d * block_size) * vscl[jj];
#else
      vs[jj * dv + d] = KLD(vh, vrow[jj] + d * block_size);
#endif
    }
#else
    for (int jj = lid / cv, c = lid % cv; jj < nj;) {
#if PAGED
      const vec_t x = KLDV(vh, vrow[jj] + c * VW);
#else
      const vec_t x = KLDV(vh, (size_t)(j0 + jj) * v_rs + c * VW);
#endif
#ifdef SCALED
      VS(x * vscl[jj], vs, jj * dv + c * VW);
#else
      VS(x, vs, jj * dv + c * VW);
#endif
      for (c += L; c >= cv; c -= cv) ++jj;
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    // Rows innermost, so a key row is reused from cache; (jj, r) steps by L without dividing.
    for (int jj = lid / nr, r = lid % nr; jj < bk;) {
      const int j = j0 + jj;
      float s = -INFINITY;
      if (jj < nj && j >= range[2 * r] && j < range[2 * r + 1]) {
        vec_t dot = (vec_t)(0.0f);
        for (int c = 0; c < ck; ++c) dot = fma(VL(qs, r * dk + c * VW), VL(ks, jj * dk + c * VW), dot);
        s = scale * hsum(dot);
      }
      ps[r * bk + jj] = s;
      for (r += L; r >= nr; r -= nr) ++jj;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Online softmax: new running max, rescale factor for what was accumulated, probabilities.
    for (int r = lid; r < nr; r += L) {
      float mx = row_m[r];
      for (int jj = 0; jj < nj; ++jj) mx = fmax(mx, ps[r * bk + jj]);
      const float alpha = mx == -INFINITY ? 1.0f : exp(row_m[r] - mx);
      float sum = 0.0f;
      for (int jj = 0; jj < nj; ++jj) {
        // fmax above passes over a NaN score; its weight is NaN here (and so the row's sum), also
        // when every score of the row is NaN and mx stayed -inf. Keys the row does not see weigh 0.
        const float sc = ps[r * bk + jj];
        const float p = sc == -INFINITY ? 0.0f : exp(sc - mx);
        ps[r * bk + jj] = p;
        sum += p;
      }
      row_m[r] = mx;
      row_l[r] = row_l[r] * alpha + sum;
      row_a[r] = alpha;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int t = 0; t < MAXO; ++t) {
      const int e = lid + t * L;
      if (e < nr * cv) {
        const int r = e / cv, c = e % cv;
        vec_t a = acc[t] * row_a[r];
        for (int jj = 0; jj < nj; ++jj) a = fma((vec_t)(ps[r * bk + jj]), VL(vs, jj * dv + c * VW), a);
        acc[t] = a;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int r = lid; r < nr; r += L) {
    const size_t o = ROW(r0 + r);
    if (piece > 0) {
      part_ml[(o * np + pc) * 2] = row_m[r];
      part_ml[(o * np + pc) * 2 + 1] = row_l[r];
    }
#ifdef LSE
    else {
      lse[(o % nh) * lse_rows + o / nh] = row_lse(row_m[r], row_l[r]);
    }
#endif
  }
#pragma unroll
  for (int t = 0; t < MAXO; ++t) {
    const int e = lid + t * L;
    if (e < nr * cv) {
      const int r = e / cv, c = e % cv;
      const size_t o = ROW(r0 + r);
      if (piece > 0)
        VS(acc[t], part_acc, (o * np + pc) * dv + c * VW);
      else
        store_out(out, out_off + o * dv + c * VW, acc[t], row_l[r]);
    }
  }
#undef ROW
}

// Merges the pieces of each row in key order (fixed, so every run gives the same bits): with M the
// largest piece max, out = sum_p acc_p * e^(m_p - M) / sum_p l_p * e^(m_p - M); a piece that saw no
// key has m = -inf and weighs 0. One work-item per (row, chunk of VW output columns).
__kernel void flash_combine(__global const float* part, int ml_off, __global st_t* out, int out_off, int rows,
                            int np, int dv, __global float* lse, int nh, int lse_rows) {
  __global const float* part_acc = part;
  __global const float* part_ml = part + ml_off;
  const int cv = dv / VW, e = get_global_id(0);
  if (e >= rows * cv) return;
  const int o = e / cv, c = e % cv;
  __global const float* ml = part_ml + (size_t)o * np * 2;
  float mx = -INFINITY;
  for (int p = 0; p < np; ++p) mx = fmax(mx, ml[2 * p]);
  float l = 0.0f;
  vec_t acc = (vec_t)(0.0f);
  // A piece that saw no key (m = -inf) weighs 0; one that saw a NaN score has l NaN, which 0 * NaN
  // still carries into the row.
  for (int p = 0; p < np; ++p) {
    const float w = ml[2 * p] == -INFINITY ? 0.0f : exp(ml[2 * p] - mx);
    l = fma(ml[2 * p + 1], w, l);
    acc = fma((vec_t)(w), VL(part_acc, ((size_t)o * np + p) * dv + c * VW), acc);
  }
  store_out(out, out_off + (size_t)o * dv + c * VW, acc, l);
#ifdef LSE
  if (c == 0) lse[(o % nh) * lse_rows + o / nh] = row_lse(mx, l);
#endif
}
