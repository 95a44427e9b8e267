// The cpu attention engine's K/V rows, per SIMD target (Highway's re-includable -inl.h pattern): where
// a tile's key and value rows are found (in place in an affine view or a ferrum pool, or widened into F32
// copies for vLLM's pools and MLA's two key segments), their quantized pools' per-row scales, how their
// elements become F32 lanes, and the prefetches that run ahead of them. The scoring core
// (cpu/attention/attention_kernel-inl.h) reads its tiles through them.
#if defined(TS_CPU_ATTENTION_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_ATTENTION_ROWS_INL_H_
#undef TS_CPU_ATTENTION_ROWS_INL_H_
#else
#define TS_CPU_ATTENTION_ROWS_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "cpu/attention/attention_core.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/prefetch.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

constexpr int64_t kTile = 64;          // keys per online-softmax step
// How far ahead of use key and value rows are asked for, in keys. Rows in place in an affine view
// (flash, MLA), each stream asked for in its own pass: kStreamPrefetchBytes of each stream ahead, the
// decode GEMVs' distance for this CPU (cpu/runtime/prefetch.h), at most kPrefetchAffineMax keys. On
// the Xeon the figures run on (2026-11-27, cold flash decode h32 kv8 hd128 ctx4096 F32, medians of 5
// alternating rounds) 3 KiB took 0.87x the time of the 32 keys (16 KiB) asked for before, 2 and 4 KiB
// 0.92-0.93x. On a Zen 4 (2026-11-28, cold, two runs of 8 alternating rounds) 8 KiB against 3 KiB:
// flash decode ctx4096 F16 0.84x and 0.95x the time (faster in 8 and 6 of 8), F32 0.93x and 0.90x (6
// of 8 each), MLA decode 0.98-1.01x.
// Rows of a paged pool, both while scoring: 16 keys (a block of 16 slots); 2, 3 and 4 KiB ahead were
// no faster there (F16, F8_E4M3, I8 ctx4096), nor 32 keys on the Zen 4 (2026-11-28, two runs of 8
// alternating rounds over the kv decodes at ctx1024-16384 and batch-8 paged decode: 0.88-1.14x the
// time, no pool faster beyond the noise in both runs).
constexpr int64_t kPrefetchAffineMax = 32;
constexpr int64_t kPrefetchPaged = 16;
// Row entries a tile keeps past its end: the affine distance, or a paged pool's next tile (RowPrefetch).
constexpr int64_t kPrefetchKeys = std::max(kPrefetchAffineMax, kTile);
static_assert(kPrefetchPaged <= kTile, "a paged pool's rows ahead lie within the next tile's entries");
inline int64_t PrefetchAffineKeys(int64_t row_bytes) {
  return std::clamp<int64_t>(static_cast<int64_t>(kStreamPrefetchBytes) / std::max<int64_t>(row_bytes, 1), 2,
                             kPrefetchAffineMax);
}

// Element to float for every K/V element type: the float types through Highway's conversions; I8 and
// F8_E4M3 codes (their pools are scaled per slot) widened in lanes too, since decode over a quantized
// pool is meant to beat the F16 pool's speed by reading fewer bytes, not lose it converting them.
inline float ElemToF32(int8_t v) { return static_cast<float>(v); }
inline float ElemToF32(F8E4M3 v) { return f8e4m3_to_f32(static_cast<uint8_t>(v)); }
template <class T> inline float ElemToF32(T v) { return to_f(v); }
// What the kernel reads an F8 pool's codes as: 2^8 too small, like its fast lanes (F8ToF32Unscaled),
// with the factor carried by each row's scale instead (exact: a power of two).
constexpr float kF8Unscale = 256.0f;
inline float KernelElem(F8E4M3 v) { return ElemToF32(v) * (1.0f / kF8Unscale); }
template <class T> inline float KernelElem(T v) { return ElemToF32(v); }

#if HWY_TARGET != HWY_SCALAR
// e4m3fn codes to F32 in lanes, through F16 (whose conversion to F32 the hardware does): e4m3's
// exponent and mantissa fields sit at F16's, shifted left 7, and the value is then 2^8 too small (bias
// 15 instead of 7); subnormal codes land on F16 subnormals of the same ratio. S.1111.111 is NaN
// (e4m3fn has no infinity): set after the conversion, whose emulation (no F16C) maps no NaN.
HWY_INLINE VF F8ToF32(DF d, const F8E4M3* p) {
  const hn::Rebind<int16_t, DF> di;
  // A sign-extended code shifted left 7 has its sign in bit 15 (and a copy in bit 14, cleared).
  const auto code = hn::PromoteTo(di, hn::LoadU(hn::Rebind<int8_t, DF>(), reinterpret_cast<const int8_t*>(p)));
  const auto h = hn::And(hn::ShiftLeft<7>(code), hn::Set(di, static_cast<int16_t>(0xBF80)));
  const auto em = hn::Set(di, static_cast<int16_t>(0x3F80));
  const auto nan = hn::PromoteTo(hn::RebindToSigned<DF>(), hn::VecFromMask(di, hn::Eq(hn::And(h, em), em)));
  const VF f = hn::Mul(hn::PromoteTo(d, hn::BitCast(hn::Rebind<hwy::float16_t, DF>(), h)), hn::Set(d, 256.0f));
  return hn::Or(f, hn::BitCast(d, nan));  // all ones: a NaN
}
// The same codes as F32 lanes 2^8 too small, with no NaN handling: what the kernel reads from a tile
// that holds no NaN code (TileHasF8NaN), its rows' scales carrying the 2^8 (kF8Unscale). Half the
// instructions of F8ToF32: the conversion was most of an F8 decode's extra cost over an I8 one.
HWY_INLINE VF F8ToF32Unscaled(DF d, const F8E4M3* p) {
  const hn::Rebind<int16_t, DF> di;
  const auto code = hn::PromoteTo(di, hn::LoadU(hn::Rebind<int8_t, DF>(), reinterpret_cast<const int8_t*>(p)));
  const auto h = hn::And(hn::ShiftLeft<7>(code), hn::Set(di, static_cast<int16_t>(0xBF80)));
  return hn::PromoteTo(d, hn::BitCast(hn::Rebind<hwy::float16_t, DF>(), h));
}
// Two vectors of lanes, codes p[0, 2N), through one vector of F16: 6 instructions per 2N codes
// instead of 8.
HWY_INLINE void F8ToF32Unscaled2(DF d, const F8E4M3* p, VF& lo, VF& hi) {
  const hn::Repartition<int16_t, DF> di;
  const hn::Repartition<hwy::float16_t, DF> dh;
  const hn::Half<decltype(dh)> dhh;
  const auto code = hn::PromoteTo(di, hn::LoadU(hn::Rebind<int8_t, decltype(di)>(), reinterpret_cast<const int8_t*>(p)));
  const auto h = hn::BitCast(dh, hn::And(hn::ShiftLeft<7>(code), hn::Set(di, static_cast<int16_t>(0xBF80))));
  lo = hn::PromoteTo(d, hn::LowerHalf(dhh, h));
  hi = hn::PromoteTo(d, hn::UpperHalf(dhh, h));
}
HWY_INLINE VF I8ToF32(DF d, const int8_t* p) {
  return hn::ConvertTo(d, hn::PromoteTo(hn::RebindToSigned<DF>(), hn::LoadU(hn::Rebind<int8_t, DF>(), p)));
}
#endif

template <class T>
HWY_INLINE void WidenRow(const T* HWY_RESTRICT src, float* HWY_RESTRICT dst, int64_t n, float scale) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, hwy::float16_t> || std::is_same_v<T, hwy::bfloat16_t>) {
    RowToF32(src, dst, n);
  } else {
    int64_t i = 0;
#if HWY_TARGET != HWY_SCALAR
    const DF d;
    const int64_t N = hn::Lanes(d);
    const VF vs = hn::Set(d, scale);
    for (; i + N <= n; i += N) {
      if constexpr (std::is_same_v<T, int8_t>) hn::StoreU(hn::Mul(I8ToF32(d, src + i), vs), d, dst + i);
      else hn::StoreU(hn::Mul(F8ToF32(d, src + i), vs), d, dst + i);
    }
#endif
    for (; i < n; ++i) dst[i] = ElemToF32(src[i]) * scale;
  }
}

// Keys and values of positions [ua, ub) of a paged view as F32 rows of a tile starting at t0 (key
// row j at kbuf + (j - t0) * dk, value row at vbuf + (j - t0) * dv), dequantized with each slot's
// scale. The block table is read once per position; rows inside a block are contiguous (ferrum) or
// gathered (vLLM's x groups, its channel-major values).
template <class T>
void LoadPagedRows(const KvView& kv, int64_t ua, int64_t ub, int64_t t0, float* kbuf, float* vbuf) {
  const KvPaging& pg = kv.paging;
  const T* k = static_cast<const T*>(kv.k1);
  const T* v = static_cast<const T*>(kv.v);
  const int64_t bs = pg.block_size, dk = kv.d1, dv = kv.dv;
  for (int64_t j = ua; j < ub; ++j) {
    const int64_t b = pg.table[j / bs], slot = j % bs;
    const float ks = pg.k_scale ? pg.k_scale[b * pg.s_block_stride + slot] : 1.0f;
    const float vsc = pg.v_scale ? pg.v_scale[b * pg.s_block_stride + slot] : 1.0f;
    const T* kb = k + b * pg.k_block_stride;
    float* kd = kbuf + (j - t0) * dk;
    if (pg.x == 0) {
      WidenRow(kb + slot * kv.ks1, kd, dk, ks);
    } else {
      for (int64_t g = 0; g < dk / pg.x; ++g) WidenRow(kb + (g * bs + slot) * pg.x, kd + g * pg.x, pg.x, ks);
    }
    const T* vb = v + b * pg.v_block_stride;
    float* vd = vbuf + (j - t0) * dv;
    if (!pg.v_channel_major) {
      WidenRow(vb + slot * kv.vs, vd, dv, vsc);
    } else {
      for (int64_t c = 0; c < dv; ++c) vd[c] = ElemToF32(vb[c * bs + slot]) * vsc;
    }
  }
}

// Lanes of a K/V row as F32, converted in registers from the pool's own element type: decode is
// meant to be bound by the bytes it reads, so no row is first copied out widened (an F16 or I8 pool
// read through an F32 copy costs a store and a reload per element, and runs slower than F32 rows).
HWY_INLINE VF LoadLanes(DF d, const float* p) { return LoadF(d, p); }
HWY_INLINE VF LoadLanes(DF d, const hwy::float16_t* p) { return LoadF(d, p); }
HWY_INLINE VF LoadLanes(DF d, const hwy::bfloat16_t* p) { return LoadF(d, p); }
#if HWY_TARGET != HWY_SCALAR
HWY_INLINE VF LoadLanes(DF d, const int8_t* p) { return I8ToF32(d, p); }
HWY_INLINE VF LoadLanes(DF d, const F8E4M3* p) { return F8ToF32Unscaled(d, p); }
#else
template <class T> HWY_INLINE VF LoadLanes(DF d, const T* p) { return hn::Set(d, KernelElem(*p)); }
#endif
// Lanes of p[0, N) and p[N, 2N): F8 codes convert two vectors at once (F8ToF32Unscaled2).
template <class T> HWY_INLINE void LoadLanes2(DF d, const T* p, VF& lo, VF& hi) {
#if HWY_TARGET != HWY_SCALAR
  if constexpr (std::is_same_v<T, F8E4M3>) return F8ToF32Unscaled2(d, p, lo, hi);
#endif
  lo = LoadLanes(d, p);
  hi = LoadLanes(d, p + hn::Lanes(d));
}

// The key and value rows of one tile as the kernel reads them: where each row starts (in the pool
// itself, or in an F32 copy for layouts whose rows are not contiguous) and, for quantized pools, each
// row's scale, applied to its score and to its softmax weight instead of to every element. Entries
// run kPrefetchKeys past the tile's last row (while such rows exist) so that the prefetcher finds them.
template <class E> struct TileRows {
  const E* k[kTile + kPrefetchKeys];
  const E* v[kTile + kPrefetchKeys];
  float ks[kTile], vs[kTile];
  int64_t n = 0, ahead = 0;  // rows in the tile; rows with addresses beyond it
  bool scaled = false;
  bool in_pool = false;  // rows read in place (worth prefetching), not from a copy
  // A folded scale is not finite (ScaleCopy). An infinite one: the element kernels' `dot x Inf` would
  // not be the reference's sum of `q x (code x Inf)` terms, NaN wherever a code is 0 or two terms
  // differ in sign. A NaN one (or an Inf) also ends the int8 route (cpu/attention/int8_scores.h), whose
  // bound holds over finite scales only.
  bool odd_scale = false;
};

// Scales src[0, n) (1 where the pool has none) times `unscale` into dst, and whether any came out
// not finite: a NaN or infinite stored scale, or a huge one the unscale took past the F32 maximum. A
// block's slots are one or two vectors (bs 16).
HWY_INLINE bool ScaleCopy(const float* HWY_RESTRICT src, int64_t n, float unscale, float* HWY_RESTRICT dst) {
  if (!src) {
    std::fill(dst, dst + n, unscale);
    return false;
  }
  int64_t t = 0;
  bool odd = false;
#if HWY_TARGET != HWY_SCALAR
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF u = hn::Set(d, unscale);
  auto any = hn::Zero(d);
  for (; t + N <= n; t += N) {
    const VF x = hn::Mul(hn::LoadU(d, src + t), u);
    hn::StoreU(x, d, dst + t);
    any = hn::Or(any, hn::VecFromMask(d, hn::Not(hn::IsFinite(x))));
  }
  odd = !hn::AllFalse(d, hn::MaskFromVec(any));
#endif
  for (; t < n; ++t) dst[t] = src[t] * unscale, odd |= !std::isfinite(dst[t]);
  return odd;
}

// Asks for the rows of the tile entry `ahead` keys past key j into L2, when the tile knows them and
// the rows are read in place: the key row in keys(j), run while scores are computed, and the value
// row there too, or, split, in values(j), run in the p·V pass. Affine views split: asked for while
// scoring, a tile's value rows had all arrived before its p·V pass, which then left the memory bus
// idle (Zen 4, 2026-11-25, cold flash decode ctx4096 against both streams 16 keys ahead while
// scoring, ci/bench-ab.py over 20 alternating rounds: F32 0.79x the time, faster in 19 of 20; F16
// 0.97x, 12 of 20, within the noise: its compute takes about as long as its reads). Paged pools did
// not gain: batch-8 paged decode ran 5-10% slower split in 5 A/B runs of 5 (a guess at why: its
// 16-row blocks lie in random order, where no hardware prefetcher runs ahead of either stream).
// Paged I8 pools scored in integers cross: while scoring key j its own value row, and in the p·V pass
// the key row a tile on. Their VNNI scoring is a short pass beside the p·V one, so asking for both
// rows while scoring bunched the requests there and left memory idle through p·V (Zen 4, 2026-11-28,
// cold kv decode, ci/bench-ab.py, 8 alternating rounds: ctx16384 I8 0.85x the time, faster in 8 of
// 8; ctx4096 0.89x, 6 of 8). Pools scored in F32 did not gain (F16 and F8_E4M3 kv decode within the
// noise, batch-8 paged F16 1.11x the time, 0 of 6), so they keep both rows while scoring, and ask for
// the next tile's key rows in the p·V pass as well: the pass's memory is otherwise idle once the
// tile's value rows have arrived, and the requests made there that the core drops (a prefetch finding
// its miss buffers full is dropped) are made again, `ahead` keys on, while that tile is scored. Zen 4,
// 2026-11-28, cold, 8 alternating rounds against both rows while scoring alone: kv decode ctx16384
// F16 0.86x the time, BF16 0.89x (8 of 8 each), batch-8 paged F16 0.90x (8 of 8), ctx4096 and ctx1024
// F16 / BF16 0.93-0.95x (6-7 of 8), F8_E4M3 (its arithmetic the bound) 1.00x; in a second run, of
// the built change: ctx16384 F16 and BF16 0.86x (8 of 8), paged decode batch-8 F16 0.91x and F32
// 0.87x, batch-1 ctx16384 0.80-0.86x, ctx1024 and the varlen prefill within the noise. Without
// the second request (the key rows asked for in the p·V pass only, as crossed) ctx1024 gained as much
// and the batch-8 decode ran 1.07x the time (1 of 8); the next tile's value rows asked for there too
// gained nothing more; the I8 route crossed with the second request ran 1.03-1.09x the time.
// A runtime switch, not a second kernel instance without prefetches: one branch per key costs
// nothing measurable, a second instance doubled the compile.
template <class E> struct RowPrefetch {
  const TileRows<E>& rows;
  int64_t kbytes, vbytes;
  // Tile entries asked for, as offsets from the step's key j (< 0: none): while scoring key j, key
  // row j + k_scoring and value row j + v_scoring; in the p·V pass, j + k_values and j + v_values.
  // Together (paged): both rows `ahead` keys on while scoring, and the next tile's key row in the p·V
  // pass (entries from rows.n on); split (affine): the value row in the p·V pass; cross (paged I8
  // scored in integers): key j's own value row while scoring, the next tile's key row in the p·V pass.
  int64_t k_scoring = -1, v_scoring = -1, k_values = -1, v_values = -1;
  HWY_INLINE void keys(int64_t j) const { ask(rows.k, j, k_scoring, kbytes), ask(rows.v, j, v_scoring, vbytes); }
  HWY_INLINE void values(int64_t j) const { ask(rows.k, j, k_values, kbytes), ask(rows.v, j, v_values, vbytes); }
  void stop() { k_scoring = v_scoring = k_values = v_values = -1; }
  HWY_INLINE void ask(const E* const* row, int64_t j, int64_t offset, int64_t bytes) const {
    if (offset >= 0 && j + offset < rows.n + rows.ahead) prefetch_l2(row[j + offset], static_cast<size_t>(bytes));
  }
};

// The tile's rows [ua, ub) (and up to `ahead` <= kPrefetchKeys beyond, below `end`: the ones the
// prefetches will ask for) found in place: affine rows, or a ferrum pool's, whose rows inside a block
// are contiguous and whose block the table gives.
template <class T>
void DirectRows(const KvView& kv, int64_t ua, int64_t ub, int64_t end, int64_t ahead, TileRows<T>& rows) {
  const KvPaging& pg = kv.paging;
  const T* k = static_cast<const T*>(kv.k1);
  // MLA without a second key segment: values are the key rows' first dv elements.
  const T* v = kv.v ? static_cast<const T*>(kv.v) : k;
  const int64_t vs = kv.v ? kv.vs : kv.ks1;
  // F8 rows are read 2^8 too small (KernelElem): their scales carry the factor, 1 when the pool has none.
  constexpr bool f8 = std::is_same_v<T, F8E4M3>;
  const float unscale = f8 ? kF8Unscale : 1.0f;
  rows.n = ub - ua;
  rows.ahead = std::min(end, ub + ahead) - ub;
  rows.scaled = pg.k_scale || pg.v_scale || f8;
  rows.in_pool = true;
  rows.odd_scale = false;
  const int64_t count = rows.n + rows.ahead;
  if (!pg.table) {
    for (int64_t i = 0; i < count; ++i) {
      rows.k[i] = k + (ua + i) * kv.ks1;
      rows.v[i] = v + (ua + i) * vs;
    }
    if (rows.scaled) std::fill(rows.ks, rows.ks + rows.n, unscale), std::fill(rows.vs, rows.vs + rows.n, unscale);
    return;
  }
  // Block by block: one table read per block (and one division per tile, not per block: the blocks
  // after the first start at slot 0), then the rows of its slots a stride apart and its scales copied
  // as they lie (a per-key step with its table read, multiplies and branches was ~11% of an I8
  // decode's instructions).
  for (int64_t i = 0, blk = ua / pg.block_size, slot = ua % pg.block_size; i < count; ++blk, slot = 0) {
    const int64_t b = pg.table[blk];
    const int64_t len = std::min(pg.block_size - slot, count - i);
    const T* kp = k + b * pg.k_block_stride + slot * kv.ks1;
    const T* vp = v + b * pg.v_block_stride + slot * vs;
    for (int64_t t = 0; t < len; ++t) rows.k[i + t] = kp + t * kv.ks1, rows.v[i + t] = vp + t * vs;
    if (rows.scaled && i < rows.n) {  // scales for the tile's own rows only (ks, vs hold kTile)
      const int64_t scaled_len = std::min(len, rows.n - i), s0 = b * pg.s_block_stride + slot;
      const bool k_odd = ScaleCopy(pg.k_scale ? pg.k_scale + s0 : nullptr, scaled_len, unscale, rows.ks + i);
      const bool v_odd = ScaleCopy(pg.v_scale ? pg.v_scale + s0 : nullptr, scaled_len, unscale, rows.vs + i);
      rows.odd_scale |= k_odd | v_odd;
    }
    i += len;
  }
  // The next tile's scales, one line per block: read at that tile's start, before any of its rows,
  // they would otherwise each be a miss the kernel waits for.
  const int64_t last = std::min(end, ub + kTile);  // positions [ub, last): blocks ub / bs .. (last - 1) / bs
  if ((pg.k_scale || pg.v_scale) && ub < last) {
    for (int64_t blk = ub / pg.block_size; blk * pg.block_size < last; ++blk) {
      const int64_t b = pg.table[blk];
      if (pg.k_scale) __builtin_prefetch(pg.k_scale + b * pg.s_block_stride, 0, 2);
      if (pg.v_scale) __builtin_prefetch(pg.v_scale + b * pg.s_block_stride, 0, 2);
    }
  }
}

// Whether a tile's key or value rows hold an e4m3fn NaN code (S.1111.111), which the kernel's lanes
// (F8ToF32Unscaled) would read as a finite value. Two instructions per vector of codes: the largest
// code without its sign bit is 0x7F only where some code is a NaN.
inline bool TileHasF8NaN(const TileRows<F8E4M3>& rows, int64_t dk, int64_t dv) {
  const hn::ScalableTag<uint8_t> du;
  const int64_t N = hn::Lanes(du);
  const auto magnitude = hn::Set(du, uint8_t{0x7F});
  auto top = hn::Zero(du);
  uint8_t top_tail = 0;
  auto scan = [&](const F8E4M3* row, int64_t n) {
    const uint8_t* c = reinterpret_cast<const uint8_t*>(row);
    int64_t i = 0;
    for (; i + 2 * N <= n; i += 2 * N) {
      top = hn::Max(top, hn::And(hn::LoadU(du, c + i), magnitude));
      top = hn::Max(top, hn::And(hn::LoadU(du, c + i + N), magnitude));
    }
    for (; i + N <= n; i += N) top = hn::Max(top, hn::And(hn::LoadU(du, c + i), magnitude));
    for (; i < n; ++i) top_tail = std::max<uint8_t>(top_tail, c[i] & 0x7F);
  };
  for (int64_t i = 0; i < rows.n; ++i) scan(rows.k[i], dk), scan(rows.v[i], dv);
  return top_tail == 0x7F || !hn::AllFalse(du, hn::Eq(top, magnitude));
}

// The tile's rows [ua, ub) widened (and dequantized) into F32 copies, for the layouts whose rows are
// not contiguous: vLLM's pools (x-interleaved keys, channel-major values) and MLA's two key segments.
template <class T> void GatherRowsT(const KvView& kv, int64_t ua, int64_t ub, float* kbuf, float* vbuf) {
  if (kv.paging.table) return LoadPagedRows<T>(kv, ua, ub, ua, kbuf, vbuf);
  const int64_t dk = kv.d1 + kv.d2;
  const T* k1 = static_cast<const T*>(kv.k1);
  const T* k2 = static_cast<const T*>(kv.k2);
  const T* v = static_cast<const T*>(kv.v);
  for (int64_t j = ua; j < ub; ++j) {
    float* dst = kbuf + (j - ua) * dk;
    WidenRow(k1 + j * kv.ks1, dst, kv.d1, 1.0f);
    if (kv.d2) WidenRow(k2 + j * kv.ks2, dst + kv.d1, kv.d2, 1.0f);
    if (kv.v) WidenRow(v + j * kv.vs, vbuf + (j - ua) * kv.dv, kv.dv, 1.0f);
  }
}
inline void GatheredRows(DType dt, const KvView& kv, int64_t ua, int64_t ub, TileRows<float>& rows) {
  thread_local std::vector<float> kbuf, vbuf;
  const int64_t dk = kv.d1 + kv.d2;
  kbuf.resize(static_cast<size_t>(kTile * dk));
  vbuf.resize(static_cast<size_t>(kTile * kv.dv));
  switch (dt) {
    case DType::I8: GatherRowsT<int8_t>(kv, ua, ub, kbuf.data(), vbuf.data()); break;
    case DType::F8_E4M3: GatherRowsT<F8E4M3>(kv, ua, ub, kbuf.data(), vbuf.data()); break;
    default:
      visit_float(dt, [&](auto tag) {
        GatherRowsT<typename decltype(tag)::type>(kv, ua, ub, kbuf.data(), vbuf.data());
      });
  }
  rows.n = ub - ua;
  rows.ahead = 0;
  rows.scaled = false;
  rows.in_pool = false;
  rows.odd_scale = false;  // the copies are dequantized element by element
  for (int64_t i = 0; i < rows.n; ++i) {
    rows.k[i] = kbuf.data() + i * dk;
    rows.v[i] = kv.v ? vbuf.data() + i * kv.dv : kbuf.data() + i * dk;  // MLA: values are the first key segment
  }
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_ATTENTION_ROWS_INL_H_
