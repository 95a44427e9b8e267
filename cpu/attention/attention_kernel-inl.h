// The cpu attention engine's kernel, per SIMD target (Highway's re-includable -inl.h pattern): a
// block of query rows (F32) against a range of key rows, online softmax over tiles of keys, reading
// only keys some row can see (rows outside the visible range may hold NaN). Rows go through a tile
// kRowGroup at a time, so each key and value row is read from memory once for the group (GQA heads of
// one kv head), in its own element type (F16, BF16, I8, F8 converted in registers, quantized rows'
// scales folded into the scores and softmax weights). Each element type is instantiated in its own
// translation unit (cpu/attention/attention_elem.inc), so that none of them is slow to compile alone.
#if defined(TS_CPU_ATTENTION_KERNEL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_ATTENTION_KERNEL_INL_H_
#undef TS_CPU_ATTENTION_KERNEL_INL_H_
#else
#define TS_CPU_ATTENTION_KERNEL_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "cpu/attention/attention_core.h"
#include "cpu/attention/attention_kernels.h"
#include "cpu/attention/int8_scores.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/prefetch.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

constexpr int64_t kTile = 64;          // keys per online-softmax step
// Query rows that share each load (and conversion) of a key and value row: the 4 query heads of a
// Llama-style kv head at once, so a row is converted from the pool's type once, not once per pair.
// The portable fallbacks (EMU128, SCALAR) run on no machine that is timed here: one row at a time
// there, so that their compile (every kernel instance again, in emulated lanes) stays small.
constexpr bool kFallback = HWY_TARGET >= HWY_EMU128;
constexpr int kRowGroup = kFallback ? 1 : 4;
// How far ahead of use key and value rows are asked for, in keys: rows in place in an affine view
// (flash, MLA), each stream asked for in its own pass; rows of a paged pool, both while scoring.
constexpr int64_t kPrefetchAffine = 32;
constexpr int64_t kPrefetchPaged = 16;
constexpr int64_t kPrefetchKeys = std::max(kPrefetchAffine, kPrefetchPaged);  // row entries a tile keeps past its end
// Fully unrolled loops over the rows of a group (and its rows x keys, up to 16), so their vector
// accumulators live in registers: an unroll of 4 left the 8 accumulators of 4 rows x 2 keys an array
// in memory, zeroed by a `rep stos` per key pair (6% of an I8 decode's samples).
#define TS_UNROLL_ROWS _Pragma("GCC unroll 16")

// Makes the compiler hold v in a register from here on, for K/V elements E read by one instruction
// per vector (F32, F16). A vector that several FMAs read (a q row shared by the keys of a step, a
// softmax weight shared by two column halves) is otherwise folded into each FMA as a memory operand,
// loaded once per use, and the F16 loops were bound by loads (warm F16 decode ~12% faster pinned).
// Not for the element types whose widening takes temporaries (I8, F8, BF16): the pinned registers
// then cost spills (I8 ~4% slower).
template <class E, class V> HWY_INLINE void InRegister(V& v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (std::is_same_v<E, float> || std::is_same_v<E, hwy::float16_t>) {
#if HWY_TARGET <= HWY_AVX3
    asm("" : "+v"(v.raw));
#else
    asm("" : "+x"(v.raw));
#endif
  }
#else
  (void)v;
#endif
}

#if HWY_TARGET != HWY_SCALAR
// {sum of v0's lanes, sum of v1's, sum of v2's, sum of v3's}: four horizontal sums for little more
// than the price of one, by interleaving within 128-bit blocks and then adding the blocks.
template <class D> HWY_INLINE hn::Vec<hn::Full128<float>> AddBlocks(D d, hn::Vec<D> v) {
  if constexpr (hn::MaxLanes(d) > 4) {
    const hn::Half<D> dh;
    return AddBlocks(dh, hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    return v;
  }
}
HWY_INLINE hn::Vec<hn::Full128<float>> SumOfLanes4(VF v0, VF v1, VF v2, VF v3) {
  const DF d;
  const hn::Repartition<uint64_t, DF> d64;
  const VF s01 = hn::Add(hn::InterleaveLower(d, v0, v1), hn::InterleaveUpper(d, v0, v1));
  const VF s23 = hn::Add(hn::InterleaveLower(d, v2, v3), hn::InterleaveUpper(d, v2, v3));
  const auto a = hn::BitCast(d64, s01), b = hn::BitCast(d64, s23);
  const VF lo = hn::BitCast(d, hn::InterleaveLower(d64, a, b)), hi = hn::BitCast(d, hn::InterleaveUpper(d64, a, b));
  return AddBlocks(d, hn::Add(lo, hi));
}
#endif
// Keys scored together for R rows, so that one q load serves several keys and their horizontal sums
// are shared: R x KeyStep accumulators plus the key loads fit the vector registers (16 below
// AVX-512). R x KeyStep is a multiple of 4 (SumOfLanes4). Below AVX-512, 4 rows take 3 keys of F32
// or F16 rows a column vector at a time (12 accumulators, 3 key vectors, the q vector: 16
// registers), and 2 keys of the types whose widening needs temporaries, two column vectors at a time
// (F8 converts two at once). 8 chains of a 4-cycle FMA barely fill two FMA pipes; 12 leave slack
// (a microbenchmark of this loop: 0.59 cycles per FMA with 8, 0.52 with 12).
template <int R, class E> constexpr int64_t KeyStep() {
  if constexpr (HWY_TARGET == HWY_SCALAR) return 1;
  else if constexpr (R != 4 || HWY_TARGET <= HWY_AVX3) return 4;
  else return std::is_same_v<E, float> || std::is_same_v<E, hwy::float16_t> ? 3 : 2;
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
};

// Asks for the rows of the tile entry `ahead` keys past key j into L2, when the tile knows them and
// the rows are read in place: the key row in keys(j), run while scores are computed, and the value
// row there too, or, split, in values(j), run in the p·V pass. Affine views split: asked for while
// scoring, a tile's value rows had all arrived before its p·V pass, which then left the memory bus
// idle (Zen 4, 2026-11-25, cold flash decode ctx4096 against both streams 16 keys ahead while
// scoring, ci/bench-ab.py over 20 alternating rounds: F32 0.79x the time, faster in 19 of 20; F16
// 0.97x, 12 of 20, within the noise: its compute takes about as long as its reads). Paged pools did
// not gain: batch-8 paged decode ran 5-10% slower split in 5 A/B runs of 5 (a guess at why: its
// 16-row blocks lie in random order, where no hardware prefetcher runs ahead of either stream).
// A runtime switch, not a second kernel instance without prefetches: one branch per key costs
// nothing measurable, a second instance doubled the compile.
template <class E> struct RowPrefetch {
  const TileRows<E>& rows;
  int64_t kbytes, vbytes;
  int64_t ahead = -1;  // < 0: no prefetch
  bool split = false;  // value rows asked for in the p·V pass, not while scoring
  HWY_INLINE void keys(int64_t j) const {
    const int64_t i = j + ahead;
    if (ahead < 0 || i >= rows.n + rows.ahead) return;
    prefetch_l2(rows.k[i], static_cast<size_t>(kbytes));
    if (!split) prefetch_l2(rows.v[i], static_cast<size_t>(vbytes));
  }
  HWY_INLINE void values(int64_t j) const {
    const int64_t i = j + ahead;
    if (split && ahead >= 0 && i < rows.n + rows.ahead) prefetch_l2(rows.v[i], static_cast<size_t>(vbytes));
  }
};

// s[r][j] = dot(q[r], k row j) * scale (* the row's scale) for R rows and keys j < n. Each key row is
// loaded and converted once for all R rows (GQA: the R query heads of one kv head); keys go KeyStep<R>()
// at a time so that each q load serves several keys. prefetch.keys(j) runs before key j: memory requests
// spread over the loop instead of one burst.
template <int R, class E>
HWY_INLINE void Scores(const float* const* HWY_RESTRICT q, const E* const* krow, const float* ks, int64_t n,
                       int64_t dk, float scale, float (*HWY_RESTRICT s)[kTile], const RowPrefetch<E>& prefetch) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  constexpr int64_t KS = KeyStep<R, E>();
  if (dk % N == 0 && KS > 1) {
    for (; j + KS <= n; j += KS) {
      TS_UNROLL_ROWS for (int64_t i = 0; i < KS; ++i) prefetch.keys(j + i);
      const E* HWY_RESTRICT k[KS];
      TS_UNROLL_ROWS for (int64_t i = 0; i < KS; ++i) k[i] = krow[j + i];
      VF a[R * KS];
      TS_UNROLL_ROWS for (int64_t i = 0; i < R * KS; ++i) a[i] = hn::Zero(d);
      // 2N columns a step, so that F8 codes convert two vectors at once (LoadLanes2); the sums
      // take the columns in the same order either way.
      auto step = [&](int64_t c, const VF* x) {
        TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
          VF qc = hn::LoadU(d, q[r] + c);
          InRegister<E>(qc);
          TS_UNROLL_ROWS for (int64_t i = 0; i < KS; ++i) a[r * KS + i] = hn::MulAdd(qc, x[i], a[r * KS + i]);
        }
      };
      int64_t c = 0;
      if constexpr (KS == 3) {
        for (; c < dk; c += N) {
          VF x[KS];
          TS_UNROLL_ROWS for (int64_t i = 0; i < KS; ++i) x[i] = LoadLanes(d, k[i] + c);
          step(c, x);
        }
      }
      for (; c + 2 * N <= dk; c += 2 * N) {
        VF x[KS], y[KS];
        TS_UNROLL_ROWS for (int64_t i = 0; i < KS; ++i) LoadLanes2(d, k[i] + c, x[i], y[i]);
        step(c, x);
        step(c + N, y);
      }
      if (c < dk) {
        VF x[KS];
        TS_UNROLL_ROWS for (int64_t i = 0; i < KS; ++i) x[i] = LoadLanes(d, k[i] + c);
        step(c, x);
      }
      const hn::Full128<float> d4;
      // Lane l of a group of 4 sums is row (g + l) / KS's dot with key j + l % KS. KS 2 or 4: one
      // vector of the keys' scales scales the group, and each row's KS scores are stored at once
      // (scalar multiplies and stores were a tenth of an I8 decode's instructions).
      if constexpr (KS == 3) {
        // Groups of 4 sums straddle rows: through memory, each score times its key's factor (the
        // product the vector multiply below would round the same way).
        float t[R * KS];
        TS_UNROLL_ROWS for (int64_t g = 0; g < R * KS; g += 4)
          hn::StoreU(SumOfLanes4(a[g], a[g + 1], a[g + 2], a[g + 3]), d4, t + g);
        TS_UNROLL_ROWS for (int64_t i = 0; i < KS; ++i) {
          const float sj = ks ? scale * ks[j + i] : scale;
          TS_UNROLL_ROWS for (int r = 0; r < R; ++r) s[r][j + i] = t[r * KS + i] * sj;
        }
      } else {
        static_assert(KS == 2 || KS == 4, "a group of 4 sums holds whole rows or pairs of rows");
        auto sv = hn::Set(d4, scale);
        if (ks) {
          if constexpr (KS == 4) {
            sv = hn::Mul(sv, hn::LoadU(d4, ks + j));
          } else {
            uint64_t pair;  // both keys' scales, repeated in the upper half
            std::memcpy(&pair, ks + j, sizeof(pair));
            sv = hn::Mul(sv, hn::BitCast(d4, hn::Set(hn::Repartition<uint64_t, decltype(d4)>(), pair)));
          }
        }
        TS_UNROLL_ROWS for (int64_t g = 0; g < R * KS; g += 4) {
          const auto v = hn::Mul(SumOfLanes4(a[g], a[g + 1], a[g + 2], a[g + 3]), sv);
          if constexpr (KS == 4) {
            hn::StoreU(v, d4, s[g / 4] + j);
          } else {
            const hn::Full64<float> d2;
            hn::StoreU(hn::LowerHalf(d2, v), d2, s[g / 2] + j);
            hn::StoreU(hn::UpperHalf(d2, v), d2, s[g / 2 + 1] + j);
          }
        }
      }
    }
  }
  if constexpr (R == 4) {
    // The keys the steps leave over, each summed as a step sums it (one chain per row over the column
    // vectors in order, the same lane tree): a score's bits do not depend on which keys share a step,
    // so the kernels of element types with different steps agree (tests/cpu_attention_f8_test.cpp).
    if (dk % N == 0)
      for (; j < n; ++j) {
        prefetch.keys(j);
        const E* HWY_RESTRICT k = krow[j];
        VF a[R];
        TS_UNROLL_ROWS for (int r = 0; r < R; ++r) a[r] = hn::Zero(d);
        for (int64_t c = 0; c < dk; c += N) {
          const VF x = LoadLanes(d, k + c);
          TS_UNROLL_ROWS for (int r = 0; r < R; ++r) a[r] = hn::MulAdd(hn::LoadU(d, q[r] + c), x, a[r]);
        }
        float t[R];
        hn::StoreU(SumOfLanes4(a[0], a[1], a[2], a[3]), hn::Full128<float>(), t);
        const float sj = ks ? scale * ks[j] : scale;
        TS_UNROLL_ROWS for (int r = 0; r < R; ++r) s[r][j] = t[r] * sj;
      }
  }
#endif
  for (; j < n; ++j) {
    prefetch.keys(j);
    const E* HWY_RESTRICT k = krow[j];
    VF a[R], b[R];
    TS_UNROLL_ROWS for (int r = 0; r < R; ++r) a[r] = b[r] = hn::Zero(d);
    int64_t c = 0;
    for (; c + 2 * N <= dk; c += 2 * N) {
      const VF k1 = LoadLanes(d, k + c), k2 = LoadLanes(d, k + c + N);
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
        a[r] = hn::MulAdd(hn::LoadU(d, q[r] + c), k1, a[r]);
        b[r] = hn::MulAdd(hn::LoadU(d, q[r] + c + N), k2, b[r]);
      }
    }
    if (c + N <= dk) {
      const VF k1 = LoadLanes(d, k + c);
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r) a[r] = hn::MulAdd(hn::LoadU(d, q[r] + c), k1, a[r]);
      c += N;
    }
    const float sj = ks ? scale * ks[j] : scale;
    TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
      float dot = hn::GetLane(hn::SumOfLanes(d, hn::Add(a[r], b[r])));
      for (int64_t i = c; i < dk; ++i) dot += q[r][i] * KernelElem(k[i]);
      s[r][j] = dot * sj;
    }
  }
}

// acc[r][c] += sum_j p[r][j] * v row j [c] for R rows; each value row is loaded and converted once
// for all rows, and the accumulators stay in registers across the keys.
// prefetch.values(j) runs before key j's first use.
template <int R, class E>
HWY_INLINE void AccumulateValues(const float (*HWY_RESTRICT p)[kTile], int64_t n, const E* const* vrow,
                                 float* const* HWY_RESTRICT acc, int64_t dv, const RowPrefetch<E>& prefetch) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  // AVX-512 FMAs take a weight straight from memory into all lanes (an embedded broadcast, free);
  // below it, each weight is put in all lanes once per tile, so that the loops over 2N columns read it
  // as their FMAs' memory operand instead of broadcasting it again for every 2N columns (callgrind:
  // the broadcasts were a fifth of that loop's instructions).
  constexpr bool kSpreadWeights = HWY_TARGET > HWY_AVX3;
  HWY_ALIGN float pb[kSpreadWeights ? kTile * R * hn::MaxLanes(DF()) : 1];
  if constexpr (kSpreadWeights)
    for (int64_t j = 0; j < n; ++j)
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r) hn::Store(hn::Set(d, p[r][j]), d, pb + (j * R + r) * N);
  auto weight = [&](int r, int64_t j) HWY_ATTR {
    if constexpr (kSpreadWeights) return hn::Load(d, pb + (j * R + r) * N);
    else return hn::Set(d, p[r][j]);
  };
  int64_t c = 0;
  // W column vectors a pass, one key a step, for the 4 rows of a GQA group: 4W accumulators, each
  // taking one FMA per key. The 2N loop below has 8 taking two chained FMAs per key pair, and 8
  // chains of a 4-cycle FMA barely fill two FMA pipes: any stall leaves them idle (a 16-register
  // microbenchmark ran 0.52 cycles per FMA with 12 chains, 0.59 with 8). AVX-512: W = 4 (16 of the 32
  // registers; half the passes over the tile's keys of the 2N loop, each reloading every weight). AVX2:
  // W = 3 over F32 / F16 rows (12 of 16 registers; the other types' widening needs temporaries). Keys
  // in the same order per column as below: the same bits.
  auto wide_passes = [&](auto width) HWY_ATTR {
    constexpr int W = decltype(width)::value;
    for (; c + W * N <= dv; c += W * N) {
      VF a[W * R];
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r)
        TS_UNROLL_ROWS for (int i = 0; i < W; ++i) a[W * r + i] = hn::LoadU(d, acc[r] + c + i * N);
      for (int64_t j = 0; j < n; ++j) {
        if (c == 0) prefetch.values(j);
        const E* HWY_RESTRICT v = vrow[j] + c;
        VF x[W];
        TS_UNROLL_ROWS for (int i = 0; i + 2 <= W; i += 2) LoadLanes2(d, v + i * N, x[i], x[i + 1]);
        if constexpr (W % 2 == 1) x[W - 1] = LoadLanes(d, v + (W - 1) * N);
        TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
          VF pj = weight(r, j);
          if constexpr (kSpreadWeights) InRegister<E>(pj);  // not an embedded broadcast's operand
          TS_UNROLL_ROWS for (int i = 0; i < W; ++i) a[W * r + i] = hn::MulAdd(pj, x[i], a[W * r + i]);
        }
      }
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r)
        TS_UNROLL_ROWS for (int i = 0; i < W; ++i) hn::StoreU(a[W * r + i], d, acc[r] + c + i * N);
    }
  };
  (void)wide_passes;  // not called by every row count and target
  if constexpr (R == 4) {
#if HWY_TARGET <= HWY_AVX3
    wide_passes(std::integral_constant<int, 4>{});
#elif HWY_TARGET == HWY_AVX2
    if constexpr (std::is_same_v<E, float> || std::is_same_v<E, hwy::float16_t>) wide_passes(std::integral_constant<int, 3>{});
#endif
  }
  for (; c + 2 * N <= dv; c += 2 * N) {
    VF a[R], b[R];
    TS_UNROLL_ROWS for (int r = 0; r < R; ++r) a[r] = hn::LoadU(d, acc[r] + c), b[r] = hn::LoadU(d, acc[r] + c + N);
    // Two keys a step: the loop's own instructions (pointer, counter, branch) were a third of it.
    int64_t j = 0;
    for (; j + 2 <= n; j += 2) {
      if (c == 0) prefetch.values(j), prefetch.values(j + 1);
      const E* HWY_RESTRICT v = vrow[j] + c;
      const E* HWY_RESTRICT w = vrow[j + 1] + c;
      VF v1, v2, w1, w2;
      LoadLanes2(d, v, v1, v2);
      LoadLanes2(d, w, w1, w2);
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
        VF pj = weight(r, j), pk = weight(r, j + 1);
        InRegister<E>(pj);
        InRegister<E>(pk);
        a[r] = hn::MulAdd(pk, w1, hn::MulAdd(pj, v1, a[r]));
        b[r] = hn::MulAdd(pk, w2, hn::MulAdd(pj, v2, b[r]));
      }
    }
    for (; j < n; ++j) {
      if (c == 0) prefetch.values(j);
      const E* HWY_RESTRICT v = vrow[j] + c;
      const VF v1 = LoadLanes(d, v), v2 = LoadLanes(d, v + N);
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
        const VF pj = weight(r, j);
        a[r] = hn::MulAdd(pj, v1, a[r]);
        b[r] = hn::MulAdd(pj, v2, b[r]);
      }
    }
    TS_UNROLL_ROWS for (int r = 0; r < R; ++r) hn::StoreU(a[r], d, acc[r] + c), hn::StoreU(b[r], d, acc[r] + c + N);
  }
  for (; c + N <= dv; c += N) {
    VF a[R];
    TS_UNROLL_ROWS for (int r = 0; r < R; ++r) a[r] = hn::LoadU(d, acc[r] + c);
    for (int64_t j = 0; j < n; ++j) {
      if (c == 0) prefetch.values(j);
      const VF v = LoadLanes(d, vrow[j] + c);
      TS_UNROLL_ROWS for (int r = 0; r < R; ++r) a[r] = hn::MulAdd(hn::Set(d, p[r][j]), v, a[r]);
    }
    TS_UNROLL_ROWS for (int r = 0; r < R; ++r) hn::StoreU(a[r], d, acc[r] + c);
  }
  for (; c < dv; ++c)
    TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
      float a = acc[r][c];
      for (int64_t j = 0; j < n; ++j) a += p[r][j] * KernelElem(vrow[j][c]);
      acc[r][c] = a;
    }
}

// The integer scores of an I8 pool (cpu/attention/int8_scores.h) on the AVX-512 targets, whose CPUs the engine
// has checked for VNNI before quantizing the queries (AttentionRun::run); the other targets score the
// F32 queries (the exact route, which the int8 route's tolerance also admits).
constexpr bool kInt8Target = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3;
template <int R>
HWY_INLINE void Int8Scores(const AttnBlock& blk, int64_t first, const int8_t* const* krow, const float* ks, int64_t n,
                           int64_t dk, float scale, float* s, const RowPrefetch<int8_t>& prefetch) {
  Int8QueryGroup g;
  g.rows = R;
  for (int r = 0; r < 4; ++r) {
    const int64_t row = first + std::min(r, R - 1);
    g.codes[r] = blk.q8[row];
    g.bias[r] = blk.q8_bias[row];
    g.factor[r] = scale * blk.q8_scale[row];
  }
  Int8KeyPrefetch pf;
  if (prefetch.ahead >= 0) {
    pf.k = prefetch.rows.k;
    pf.v = prefetch.rows.v;
    pf.offset = prefetch.ahead;
    pf.limit = prefetch.rows.n + prefetch.rows.ahead;
    pf.kbytes = static_cast<size_t>(prefetch.kbytes);
    pf.vbytes = static_cast<size_t>(prefetch.vbytes);
    pf.values = !prefetch.split;
  }
  score_int8_keys(g, krow, ks, n, dk, s, kTile, pf);
}

// One online-softmax step for R rows (rows first .. first + R - 1 of the block) over the keys
// [u0, u0 + n) of a tile, which some of those rows see (rows[0] is key u0): scores, masking of the
// keys a row does not see, rescaling of the running state, then p·V.
template <int R, class E>
HWY_INLINE void StepRows(const AttnTask& task, const AttnBlock& blk, int64_t first, int64_t u0, int64_t n,
                         const TileRows<E>& rows, int64_t off, int64_t dk, int64_t dv, float scale,
                         const RowPrefetch<E>& prefetch) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  HWY_ALIGN float s[R][kTile];
  if constexpr (std::is_same_v<E, int8_t> && kInt8Target) {
    if (blk.q8) {
      Int8Scores<R>(blk, first, rows.k + off, rows.scaled ? rows.ks + off : nullptr, n, dk, scale, s[0], prefetch);
    } else {
      Scores<R>(blk.q + first, rows.k + off, rows.scaled ? rows.ks + off : nullptr, n, dk, scale, s, prefetch);
    }
  } else {
    Scores<R>(blk.q + first, rows.k + off, rows.scaled ? rows.ks + off : nullptr, n, dk, scale, s, prefetch);
  }
  float* acc[R];
  TS_UNROLL_ROWS for (int r = 0; r < R; ++r) {
    const int64_t row = first + r;
    acc[r] = task.acc + row * dv;
    const int64_t a = std::clamp(blk.lo[row] - u0, int64_t{0}, n), b = std::clamp(blk.hi[row] - u0, int64_t{0}, n);
    if (a >= b) {  // this row sees none of these keys: it adds nothing
      std::fill(s[r], s[r] + n, 0.0f);
      continue;
    }
    const float ninf = -std::numeric_limits<float>::infinity();
    int64_t j = a;
    VF vmax = hn::Set(d, ninf), vnan = hn::Zero(d);
    for (; j + N <= b; j += N) {
      const VF x = hn::LoadU(d, s[r] + j);
      vmax = hn::Max(vmax, x);
      vnan = hn::Or(vnan, hn::VecFromMask(d, hn::IsNaN(x)));
    }
    float mt = hn::GetLane(hn::MaxOfLanes(d, vmax));
    bool nan = !hn::AllFalse(d, hn::MaskFromVec(vnan));
    for (; j < b; ++j) mt = std::max(mt, s[r][j]), nan = nan || std::isnan(s[r][j]);
    // A +Inf score is the row's max, and the reference's exp(s - max) is exp(Inf - Inf) = NaN for it:
    // the row is NaN as for a NaN score (docs/catalog.md, "Special values").
    nan = nan || mt == std::numeric_limits<float>::infinity();
    float& m = task.m[row];
    float& l = task.l[row];
    const float mn = std::max(m, mt);
    if (mn == ninf) {  // every score so far -Inf: masked keys, weight 0 (only such keys: zeros, as the reference)
      std::fill(s[r], s[r] + n, 0.0f);
      if (nan) l = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    if (m != mn) {
      const float corr = m == ninf ? 0.0f : std::exp(m - mn);
      l *= corr;
      Scale(corr, acc[r], dv);
      m = mn;
    }
    std::fill(s[r], s[r] + a, 0.0f);
    std::fill(s[r] + b, s[r] + n, 0.0f);
    // The weights exp(s - m), their sum, and (quantized pools) each weight times its value row's
    // scale, which so multiplies the row once rather than each of its elements.
    const VF vm = hn::Set(d, mn);
    const float* vs = rows.scaled ? rows.vs + off : nullptr;
    VF vsum = hn::Zero(d);
    for (j = a; j + N <= b; j += N) {
      const VF e = hn::Exp(d, hn::Sub(hn::LoadU(d, s[r] + j), vm));
      vsum = hn::Add(vsum, e);
      hn::StoreU(vs ? hn::Mul(e, hn::LoadU(d, vs + j)) : e, d, s[r] + j);
    }
    float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
    for (; j < b; ++j) {
      const float e = std::exp(s[r][j] - mn);
      sum += e;
      s[r][j] = vs ? e * vs[j] : e;
    }
    l += sum;
    // A NaN score makes every weight of the reference's softmax NaN (its exp sums it in), where the
    // max and exp above would let it weigh 0: the row's sum is poisoned instead, which no later tile
    // and no merge of key-split states clears (AttentionRun::run), so the row's output is NaN.
    if (nan) l = std::numeric_limits<float>::quiet_NaN();
  }
  AccumulateValues<R>(s, n, rows.v + off, acc, dv, prefetch);
}

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
  const int64_t count = rows.n + rows.ahead;
  if (!pg.table) {
    for (int64_t i = 0; i < count; ++i) {
      rows.k[i] = k + (ua + i) * kv.ks1;
      rows.v[i] = v + (ua + i) * vs;
    }
    if (rows.scaled) std::fill(rows.ks, rows.ks + rows.n, unscale), std::fill(rows.vs, rows.vs + rows.n, unscale);
    return;
  }
  // Block by block: one table read and one division per block, then the rows of its slots a stride
  // apart and its scales copied as they lie (a per-key step with its table read, multiplies and
  // branches was ~11% of an I8 decode's instructions).
  for (int64_t i = 0, pos = ua; i < count;) {
    const int64_t b = pg.table[pos / pg.block_size], slot = pos % pg.block_size;
    const int64_t len = std::min(pg.block_size - slot, count - i);
    const T* kp = k + b * pg.k_block_stride + slot * kv.ks1;
    const T* vp = v + b * pg.v_block_stride + slot * vs;
    for (int64_t t = 0; t < len; ++t) rows.k[i + t] = kp + t * kv.ks1, rows.v[i + t] = vp + t * vs;
    if (rows.scaled) {
      const int64_t scaled_len = std::min(len, rows.n - i), s0 = b * pg.s_block_stride + slot;
      for (int64_t t = 0; t < scaled_len; ++t) {
        rows.ks[i + t] = (pg.k_scale ? pg.k_scale[s0 + t] : 1.0f) * unscale;
        rows.vs[i + t] = (pg.v_scale ? pg.v_scale[s0 + t] : 1.0f) * unscale;
      }
    }
    i += len;
    pos += len;
  }
  // The next tile's scales, one line per block: read at that tile's start, before any of its rows,
  // they would otherwise each be a miss the kernel waits for.
  if (pg.k_scale || pg.v_scale) {
    for (int64_t pos = ub; pos < std::min(end, ub + kTile); pos += pg.block_size - pos % pg.block_size) {
      const int64_t b = pg.table[pos / pg.block_size];
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
  for (int64_t i = 0; i < rows.n; ++i) {
    rows.k[i] = kbuf.data() + i * dk;
    rows.v[i] = kv.v ? vbuf.data() + i * kv.dv : kbuf.data() + i * dk;  // MLA: values are the first key segment
  }
}

// Rows [r0, r1) of a block over one tile (keys [a, b) some of them see; tile entry `off` is key a):
// groups of 4, 2 and 1 rows, the only StepRows instances (3 rows are 2 + 1: a tile's rows are in
// cache by then, and each instance is compiled per element type and target).
template <class E>
void StepGroup(const AttnTask& task, const AttnBlock& blk, int64_t r0, int64_t r1, int64_t a, int64_t b,
               const TileRows<E>& rows, int64_t off, int64_t dk, int64_t dv, float scale,
               RowPrefetch<E> prefetch) {
  while (r0 < r1) {
    if constexpr (!kFallback) {
      if (r1 - r0 >= 4) {
        StepRows<4>(task, blk, r0, a, b - a, rows, off, dk, dv, scale, prefetch);
        r0 += 4;
        prefetch.ahead = -1;  // the first call asked for the rows already
        continue;
      }
      if (r1 - r0 >= 2) {
        StepRows<2>(task, blk, r0, a, b - a, rows, off, dk, dv, scale, prefetch);
        r0 += 2;
        prefetch.ahead = -1;
        continue;
      }
    }
    StepRows<1>(task, blk, r0, a, b - a, rows, off, dk, dv, scale, prefetch);
    r0 += 1;
    prefetch.ahead = -1;
  }
}

// The tiles of a task, each tile's visible rows in groups of kRowGroup query rows sharing every load.
// Rows come from the pool in place, or (gathered: F32 only) from F32 copies of element type dt.
template <class E>
void AttendTiles(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale, bool gathered, DType dt) {
  const int64_t dk = kv.d1 + kv.d2;
  // Keys some row of [r0, r1) sees within [t0, t1), as [lo, hi); empty when none does.
  auto seen = [&](int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    int64_t lo = t1, hi = t0;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t a = std::max(blk.lo[r], t0), b = std::min(blk.hi[r], t1);
      if (a < b) lo = std::min(lo, a), hi = std::max(hi, b);
    }
    return std::pair{lo, hi};
  };
  TileRows<E> rows;
  bool first = true;
  const bool paged = kv.paging.table != nullptr;
  const int64_t ahead = paged ? kPrefetchPaged : kPrefetchAffine;
  for (int64_t t0 = task.j0; t0 < task.j1; t0 += kTile) {
    const int64_t t1 = std::min(t0 + kTile, task.j1);
    // Not structured bindings here or below: lambdas capture them, which clang before 16 refuses.
    const std::pair<int64_t, int64_t> used = seen(0, blk.rows, t0, t1);
    const int64_t ua = used.first, ub = used.second;
    if (ua >= ub) continue;
    if constexpr (std::is_same_v<E, float>) {
      if (gathered) GatheredRows(dt, kv, ua, ub, rows);
      else DirectRows(kv, ua, ub, task.j1, ahead, rows);
    } else {
      DirectRows(kv, ua, ub, task.j1, ahead, rows);
    }
    // The rows the in-loop prefetches run ahead of (a task's first `ahead`), all asked for at
    // once: one key's work is more instructions than the core looks ahead, so each of their misses
    // would otherwise be waited for alone.
    if (first && rows.in_pool) {
      for (int64_t i = 0; i < std::min(rows.n, ahead); ++i) {
        prefetch_l2(rows.k[i], static_cast<size_t>(dk * sizeof(E)));
        prefetch_l2(rows.v[i], static_cast<size_t>(kv.dv * sizeof(E)));
      }
    }
    first = false;
    for (int64_t r0 = 0; r0 < blk.rows; r0 += kRowGroup) {
      const int64_t r1 = std::min<int64_t>(blk.rows, r0 + kRowGroup);
      const std::pair<int64_t, int64_t> range = seen(r0, r1, t0, t1);
      const int64_t a = range.first, b = range.second;
      if (a >= b) continue;
      // Decode streams K and V: while the first row group uses key j, ask for the rows of key
      // j + ahead, so the requests spread over the tile instead of arriving in one burst.
      const bool ask = r0 == 0 && rows.in_pool;
      const RowPrefetch<E> prefetch{rows, static_cast<int64_t>(dk * sizeof(E)), static_cast<int64_t>(kv.dv * sizeof(E)),
                                    ask ? a - ua + ahead : -1, !paged};
      StepGroup(task, blk, r0, r1, a, b, rows, a - ua, dk, kv.dv, scale, prefetch);
    }
    if constexpr (std::is_same_v<E, F8E4M3>) {
      // A NaN code (rare: a pool written from NaNs) sends the whole task, from its start, through
      // exact F32 copies of its rows (the F32 kernel), so that this kernel's lanes need no NaN test.
      // Checked after the tile's steps, when its rows are in cache: a scan before them stalled on
      // memory the prefetches had not asked for yet (F8 decode 15% slower).
      if (TileHasF8NaN(rows, dk, kv.dv)) {
        std::fill(task.m, task.m + blk.rows, -std::numeric_limits<float>::infinity());
        std::fill(task.l, task.l + blk.rows, 0.0f);
        std::fill(task.acc, task.acc + blk.rows * kv.dv, 0.0f);
        return attend_f32(task, blk, kv, scale, dt);
      }
    }
  }
}

// Keys [task.j0, task.j1) for every row of a block over K/V elements E, read in place; E = float also
// serves every layout whose rows are not contiguous (any element type dt, through F32 copies).
template <class E>
void AttendElem(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale, DType dt) {
  // The F32 kernel also takes in-place views of other element types (an F8 task with a NaN code):
  // those go through F32 copies too.
  AttendTiles<E>(task, blk, kv, scale, !rows_in_place(kv) || dt != DType::F32, dt);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_ATTENTION_KERNEL_INL_H_
