// The decode GEMV's integer dot, per SIMD target (Highway's re-includable -inl.h pattern): weight
// codes of the GGUF block kinds (cpu/quant/quant_decode-inl.h) times activations quantized to int8,
// on the steps of cpu/quant/quant_int8_steps-inl.h.
//
// The activation rows are quantized once per call (QuantActivations in cpu/quant/quant_gemm.cpp) to int8
// with an F32 scale da per block: blocks of 32 for Q4_0, Q4_1 and Q8_0 (their weight scales change
// every 32 values anyway), of 256 for the K kinds, so that a whole K block's integer sums, each
// sub-block's integer scale applied in integers, meet a single F32 multiply by d_w * da. A weight
// block's codes are non-negative (Q8_0's signed ones take the sign trick), so 32 codes times 32 int8
// activations are one unsigned x signed byte multiply with pairwise i16 sums (x86's maddubs; no pair
// sum can saturate: 2 * 63 * 127 < 2^15) and a pair sum to i32 that also applies the sub-block's
// scale (madd); Q4_0 / Q4_1 and Q4_K / Q5_K first add i16 sums of several steps while they fit, so
// that one madd serves many (PairedSums8, DotQ8K4). The offsets and mins never enter the inner loop:
// they multiply the activations' sums (F32 per 32 for the legacy kinds, int16 per 16 and 32 for the
// K kinds, in integers too).
#if defined(TS_CPU_QUANT_INT8_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_QUANT_INT8_DOT_INL_H_
#undef TS_CPU_QUANT_INT8_DOT_INL_H_
#else
#define TS_CPU_QUANT_INT8_DOT_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "cpu/quant/quant_int8_steps-inl.h"
#include "cpu/runtime/prefetch.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// Makes the compiler read v back from memory after this point: broadcasts of its elements are then
// loads, which x86 does without a vector ALU op, where the compiler, knowing the values in a
// register, would build each with one or two shuffles.
template <class T> HWY_INLINE void KeepInMemory(T& v) { asm("" : "+m"(v)); }

// acc += (float) isum * scale.
HWY_INLINE void AddScaled(VF& acc, hn::Vec<DI32> isum, float scale) {
  acc = hn::MulAdd(hn::ConvertTo(DF(), isum), hn::Set(DF(), scale), acc);
}

// odd[i] += the offsets of blocks j.. (kNF of them; -8 d for Q4_0, m for Q4_1) times the activation
// sums, d their weight scales.
template <class K, int M, class Halves>
HWY_INLINE void AddOffsets(VF d, const Halves& mh, int j, int64_t at, const ActQ8* a, VF* odd) {
  if constexpr (K::kMinAt != 0 || K::kZero != 0) {
    const VF off = K::kMinAt != 0 ? F16Lanes(mh, j) : hn::Mul(d, hn::Set(DF(), -static_cast<float>(K::kZero)));
    for (int i = 0; i < M; ++i) odd[i] = hn::MulAdd(off, hn::LoadU(DF(), a[i].fs32 + at + j), odd[i]);
  }
}

// scale[i][j] = block j's d times row i's activation scale, for the 8 blocks of a group from blk0
// (dh, mh: their f16 d and mins, LoadHalves8), kept in memory; the offsets into odd.
template <class K, int M, class Halves>
HWY_INLINE void LegacyScales(const Halves& dh, const Halves& mh, int64_t blk0, const ActQ8* a, VF* odd, float (&scale)[M][8]) {
  for (int j = 0; j < 8; j += kNF) {
    const VF d = F16Lanes(dh, j);
    for (int i = 0; i < M; ++i) hn::StoreU(hn::Mul(d, hn::LoadU(DF(), a[i].d + blk0 + j)), DF(), scale[i] + j);
    AddOffsets<K, M>(d, mh, j, blk0, a, odd);
  }
  KeepInMemory(scale);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// A full group of Q4_0 / Q4_1 around its integer sums (lane j: block j's, PairedSums8 or the VNNI
// step's): the blocks' d, the offsets into odd; then one FMA per row.
template <class K, int M, class Halves>
HWY_INLINE VF PairedGroupStart(const Halves& dh, const Halves& mh, int64_t blk0, const ActQ8* a, VF* odd) {
  const VF d = F16Lanes(dh, 0);
  AddOffsets<K, M>(d, mh, 0, blk0, a, odd);
  return d;
}
template <int M> HWY_INLINE void PairedGroupEnd(VF d, const hn::Vec<DI32>* sums, int64_t blk0, const ActQ8* a, VF* acc) {
  for (int i = 0; i < M; ++i)
    acc[i] = hn::MulAdd(hn::ConvertTo(DF(), sums[i]), hn::Mul(d, hn::LoadU(DF(), a[i].d + blk0)), acc[i]);
}
#endif

// Blocks of 32 (Q4_0, Q4_1, Q8_0), nb <= 8 of them from block blk0 of the row (a multiple of 8): their
// f16 scales (and mins) widened 8 at a time, the offsets times the activation sums as one vector FMA.
// A full group of Q4_0 / Q4_1 on AVX2 then takes PairedSums8 and one FMA per row; anything else an
// integer dot and one FMA per block. acc[i] and odd[i]: two sums per row (the lanes summed at the
// end). The activation arrays are padded so that reading 8 blocks is in bounds.
template <class K, int M>
HWY_INLINE void DotQ8Legacy(const uint8_t* b, int64_t blk0, int nb, const ActQ8* a, VF* acc, VF* odd) {
  // nb < 8: the missing blocks' scales are 0.
  const auto dh = LoadHalves8<K::kBytes>(b, nb);
  const auto mh = LoadHalves8<K::kBytes>(b + K::kMinAt, K::kMinAt != 0 ? nb : 0);
  const bool paired = K::kPaired && nb == 8;  // a full group: its activations in paired order
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if (paired) {
    const VF d = PairedGroupStart<K, M>(dh, mh, blk0, a, odd);
    hn::Vec<DI32> sums[M];
    PairedSums8<K, M>(b, blk0, a, sums);
    PairedGroupEnd<M>(d, sums, blk0, a, acc);
    return;
  }
#endif
  float scale[M][8];
  LegacyScales<K, M>(dh, mh, blk0, a, odd, scale);
  // Block j into sums (acc for even j, odd for odd j: the choice must be static to stay in registers).
  const auto block = [&](int j, VF* sums) {
    const uint8_t* qs = b + j * K::kBytes + K::kQs;
    hn::Vec<DI32> isum[M];
    for (int i = 0; i < M; ++i) isum[i] = hn::Zero(DI32());
    for (int l = 0; l < 32; l += kN8) {
      // (Paired order only where kN8 <= 16: on AVX2 a full group of the paired kinds took PairedSums8.)
      const int64_t at = 32 * blk0 + (paired ? paired_at(j, l) : 32 * j + l);
      if constexpr (!K::kPaired) {
        const V8 w = hn::LoadU(D8(), qs + l);
        for (int i = 0; i < M; ++i) isum[i] = hn::Add(isum[i], DotI8(w, a[i].q + at, l));
      } else {
        const V8 w = Nibbles32(qs, l);
        for (int i = 0; i < M; ++i) isum[i] = hn::Add(isum[i], DotU8(w, a[i].qp + at, l));
      }
    }
    for (int i = 0; i < M; ++i) AddScaled(sums[i], isum[i], scale[i][j]);
  };
  int j = 0;
  for (; j + 2 <= nb; j += 2) {
    block(j, acc);
    block(j + 1, odd);
  }
  if (j < nb) block(j, acc);
}

// The kinds of ScalesMinsK4's packed 6-bit scales and mins.
template <class K> inline constexpr bool kIsK4 = std::is_same_v<K, BlockQ4_K> || std::is_same_v<K, BlockQ5_K>;
// Q4_K and Q5_K: a block's integer sum sum_c sc_c * (codes_c . a_c) times d * da, less
// dmin * da * sum_c m_c * bs32_c. (|sum| <= 8 * 32 * 31 * 127 * 63 < 2^26: no overflow, and its F32
// rounding is far below da's.)
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// A pair's (or a lone block's) scales and mins as i16 (LoadK4Scales) and its f16 d, dmin as F32
// (d0, dmin0, d1, dmin1): decoded once for both blocks, whichever step takes their integer sums
// (DotQ8K4 here, the AVX-512 VNNI one of cpu/quant/quant_int8_vnni-inl.h).
struct K4Pair {
  __m256i sc2, mn2;
  __m128 dh;
};
template <int kBlocks> HWY_INLINE K4Pair LoadK4Pair(const uint8_t* b, int64_t stride) {
  K4Pair s;
  LoadK4Scales<kBlocks>(b, stride, s.sc2, s.mn2);
  // d, dmin of block 0, then of block 1 (0 for one block).
  uint32_t h0, h1 = 0;
  hwy::CopyBytes<4>(b, &h0);
  if (kBlocks == 2) hwy::CopyBytes<4>(b + stride, &h1);
  s.dh = _mm_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128(static_cast<int>(h0)), static_cast<int>(h1), 1));
  return s;
}
// Whether a kind's codes (at most kMaxCode) take three hadd levels and one madd by its scales per
// block, which pairs sub-blocks 2t and 2t + 1 in lane t of each half of a block's integer sum; else
// two levels and two madds, pairing sub-blocks t and t + 4. (The VNNI step builds the same lanes.)
template <int kMaxCode> inline constexpr bool kK4ThreeLevels = 16 * kMaxCode * 127 < 32768;
// Block j (of the pair s) into acc (j = 0) or acc_odd (j = 1) of one activation row, from its
// integer sum in 8 i32 lanes (lane 4h + t: half h of the codes of two sub-blocks, each times its
// scale): times d * da; block 0 also takes both blocks' mins times the 32-sums, times dmin * da.
template <int kBlocks>
HWY_INLINE void AddK4Block(const K4Pair& s, int j, __m256i isum, const ActQ8K& a, int64_t blk, VF& acc, VF& acc_odd) {
  // f = (d0 da0, dmin0 da0, d1 da1, dmin1 da1): lane 2j is this block's d * da.
  const __m128 da = kBlocks == 2 ? _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(a.d + blk)))
                                 : _mm_load_ss(a.d + blk);
  const __m256 f = _mm256_castps128_ps256(_mm_mul_ps(s.dh, _mm_unpacklo_ps(da, da)));
  VF& to = j == 0 ? acc : acc_odd;
  to.raw = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_permutevar8x32_ps(f, _mm256_set1_epi32(2 * j)), to.raw);
  if (j == 0) {  // both blocks' mins: block j's in half j, times its dmin * da
    const __m256i bs = kBlocks == 2 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.bs32 + 8 * blk))
                                    : _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a.bs32 + 8 * blk)));
    const __m256 dmin_da = _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3));
    to.raw = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(s.mn2, bs)), dmin_da, to.raw);
  }
}
// kBlocks (1 or 2) blocks from b, block j into acc (j = 0) or acc_odd (j = 1); chunk(bj, c, lo, hi)
// gives the 64 codes of chunk c (of 4) of the block at bj: sub-block 2c in lo, 2c + 1 in hi, 32 each,
// in the order of the activations (natural). The two maddubs' i16 lanes (2 products each) are merged
// by hadd, which keeps a lane to one sub-block: [2c x4 | 2c + 1 x4] per 128-bit half, 4 products a
// lane; a second hadd of chunks c, c + 1 gives [2c, 2c, .., 2c + 3, 2c + 3] (8 products), a third
// of the two pairs [0, 1, .., 7] (16). Each level fits i16 while its products do: 8 * 31 * 127 and
// 16 * 15 * 127 < 2^15, so Q4_K (codes <= 15) takes all three levels and one madd by its scales per
// block, Q5_K (codes <= 31) two levels and two madds. The two blocks share the scale decoding, the
// madd of their mins by the 32-sums (adjacent in ActQ8K::bs32) and its FMA, and the conversion of
// their f16 d and dmin.
template <int M, int kMaxCode, int kBlocks, class Chunk>
HWY_INLINE void DotQ8K4(const uint8_t* b, int64_t stride, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd,
                        Chunk&& chunk) {
  static_assert(8 * kMaxCode * 127 < 32768, "two hadd levels must fit i16");
  const K4Pair s = LoadK4Pair<kBlocks>(b, stride);
  for (int j = 0; j < kBlocks; ++j) {
    const uint8_t* bj = b + j * stride;
    __m256i pairs[M][2];  // chunks 0, 1 and 2, 3 after two hadd levels
    for (int c = 0; c < 4; ++c) {
      __m256i lo, hi;
      chunk(bj, c, lo, hi);
      for (int i = 0; i < M; ++i) {
        const int8_t* at = a[i].q + 256 * (blk + j) + 64 * c;
        const __m256i p = _mm256_hadd_epi16(_mm256_maddubs_epi16(lo, LoadA8(at)), _mm256_maddubs_epi16(hi, LoadA8(at + 32)));
        pairs[i][c / 2] = c % 2 == 0 ? p : _mm256_hadd_epi16(pairs[i][c / 2], p);
      }
    }
    // (Two calls: the selector must be a constant expression for clang.)
    const __m256i sc = j == 0 ? _mm256_permute2x128_si256(s.sc2, s.sc2, 0x00) : _mm256_permute2x128_si256(s.sc2, s.sc2, 0x11);
    for (int i = 0; i < M; ++i) {
      __m256i isum;
      if constexpr (kK4ThreeLevels<kMaxCode>)
        isum = _mm256_madd_epi16(_mm256_hadd_epi16(pairs[i][0], pairs[i][1]), sc);
      else
        isum = _mm256_add_epi32(_mm256_madd_epi16(pairs[i][0], _mm256_unpacklo_epi16(sc, sc)),
                                _mm256_madd_epi16(pairs[i][1], _mm256_unpackhi_epi16(sc, sc)));
      AddK4Block<kBlocks>(s, j, isum, a[i], blk, acc[i], acc_odd[i]);
    }
  }
}
HWY_INLINE void NibblesK(const uint8_t* qs, __m256i& lo, __m256i& hi) {
  SplitNibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)), lo, hi);
}
// kBlocks (1 or 2) blocks of Q4_K / Q5_K from b (the pair's second into acc_odd).
template <int M, int kBlocks>
HWY_INLINE void DotQ8Blocks(BlockQ4_K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd) {
  DotQ8K4<M, 15, kBlocks>(b, BlockQ4_K::kBytes, blk, a, acc, acc_odd,
                          [](const uint8_t* bj, int c, __m256i& lo, __m256i& hi) { NibblesK(bj + 16 + 32 * c, lo, hi); });
}
template <int M, int kBlocks>
HWY_INLINE void DotQ8Blocks(BlockQ5_K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd) {
  DotQ8K4<M, 31, kBlocks>(b, BlockQ5_K::kBytes, blk, a, acc, acc_odd, [](const uint8_t* bj, int c, __m256i& lo, __m256i& hi) {
    const __m256i qh = LoadA8(reinterpret_cast<const int8_t*>(bj + 16));  // one load per block once inlined
    NibblesK(bj + 48 + 32 * c, lo, hi);
    lo = _mm256_or_si256(lo, BitsTo4(hn::Vec<D8>{qh}, 2 * c, 1).raw);
    hi = _mm256_or_si256(hi, BitsTo4(hn::Vec<D8>{qh}, 2 * c + 1, 1).raw);
  });
}
template <int M, class K>
  requires kIsK4<K>
HWY_INLINE void DotQ8Block(K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc) {
  DotQ8Blocks<M, 1>(K{}, b, blk, a, acc, acc);
}
template <int M, class K>
  requires kIsK4<K>
HWY_INLINE void DotQ8Pair(K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd) {
  DotQ8Blocks<M, 2>(K{}, b, blk, a, acc, acc_odd);
}
#else
// codes(c, l) gives codes l.. of sub-block c (of 8).
template <int M, class Codes>
HWY_INLINE void DotQ8K4(const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, Codes&& codes) {
  const K4Scales s = LoadK4Scales(b + BlockQ4_K::kRow.scales);
  hn::Vec<DI32> isum[M];
  for (int i = 0; i < M; ++i) isum[i] = hn::Zero(DI32());
  for (int c = 0; c < 8; ++c) {
    const StepScale sc = K4Scale(s, c);
    for (int l = 0; l < 32; l += kN8) {
      const V8 w = codes(c, l);
      for (int i = 0; i < M; ++i) isum[i] = hn::Add(isum[i], DotU8Scaled(w, a[i].q + 256 * blk + 32 * c + l, l, sc));
    }
  }
  for (int i = 0; i < M; ++i) {
    VF d_da, dmin_da;
    HalvesTimes(b, a[i].d[blk], d_da, dmin_da);
    acc[i] = hn::MulAdd(hn::ConvertTo(DF(), isum[i]), d_da, acc[i]);
    acc[i] = hn::NegMulAdd(hn::ConvertTo(DF(), K4ScaledMins(s, a[i].bs32 + 8 * blk)), dmin_da, acc[i]);
  }
}
template <int M> HWY_INLINE void DotQ8Block(BlockQ4_K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc) {
  DotQ8K4<M>(b, blk, a, acc, [b](int c, int l) {
    const V8 v = hn::LoadU(D8(), b + BlockQ4_K::kRow.qs + 32 * (c / 2) + l);
    return c % 2 == 0 ? hn::And(v, hn::Set(D8(), 0xF)) : hn::ShiftRight<4>(v);
  });
}
template <int M> HWY_INLINE void DotQ8Block(BlockQ5_K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc) {
  DotQ8K4<M>(b, blk, a, acc, [b](int c, int l) {
    const V8 v = hn::LoadU(D8(), b + BlockQ5_K::kRow.qs + 32 * (c / 2) + l);
    const V8 lo = c % 2 == 0 ? hn::And(v, hn::Set(D8(), 0xF)) : hn::ShiftRight<4>(v);
    return hn::Or(lo, BitsTo4(hn::LoadU(D8(), b + BlockQ5_K::kRow.qh + l), c, 1));
  });
}
#endif
// Q6_K: chunk j (of 4) of half h holds sub-blocks 8h + 2j and 8h + 2j + 1; the -32 offset is
// -32 sum_s sc_s bs16_s over the block's 16 sub-blocks, in the same integer sum, times d * da.
// (|sum| <= 256 * 63 * 127 * 128 + 32 * 16 * 128 * 2032 < 2^29.)
// (The offset term is where a block's integer sum starts, in the VNNI step too.)
HWY_INLINE hn::Vec<DI32> Q6Offsets(const int8_t* scales, const int16_t* bs16) {
  return hn::Neg(hn::ShiftLeft<5>(Q6ScaledSums(scales, bs16)));
}
template <int M> HWY_INLINE void DotQ8Block(BlockQ6_K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc) {
  const float d = LoadHalf(b + BlockQ6_K::kRow.d);
  const int8_t* scales = reinterpret_cast<const int8_t*>(b + BlockQ6_K::kRow.scales);
  hn::Vec<DI32> isum[M];
  for (int i = 0; i < M; ++i) isum[i] = Q6Offsets(scales, a[i].bs16 + 16 * blk);
  const Q6Scales sc = LoadQ6Scales(scales);
  for (int h = 0; h < 2; ++h)
    for (int j = 0; j < 4; ++j) {
      const StepScale pair = Q6Pair(sc, h, j);
      for (int l = 0; l < 32; l += kN8) {
        const V8 q = hn::LoadU(D8(), b + 64 * h + 32 * (j & 1) + l);
        const V8 top = BitsTo4(hn::LoadU(D8(), b + BlockQ6_K::kRow.qh + 32 * h + l), 2 * j, 3);
        const V8 w = hn::Or(j >= 2 ? hn::ShiftRight<4>(q) : hn::And(q, hn::Set(D8(), 0xF)), top);
        for (int i = 0; i < M; ++i)
          isum[i] = hn::Add(isum[i], DotU8Scaled(w, a[i].q + 256 * blk + 128 * h + 32 * j + l, l, pair));
      }
    }
  for (int i = 0; i < M; ++i) AddScaled(acc[i], isum[i], d * a[i].d[blk]);
}

// Two blocks from b (the second into acc_odd), each on its own where a kind has no pairwise dot.
template <int M, class K>
  requires(!kIsK4<K> || !(HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2))
HWY_INLINE void DotQ8Pair(K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd) {
  DotQ8Block<M>(K{}, b, blk, a, acc);
  DotQ8Block<M>(K{}, b + K::kBytes, blk + 1, a, acc_odd);
}

// The weights ahead of the ones about to be read (`bytes` of them, from `at` + kStreamPrefetchBytes), into
// L2: one stream per thread is not enough for the hardware prefetchers to keep the memory bus busy.
// (Past a row's end this reads the next row, or past the matrix: prefetches never fault.)
// Measured on a Zen 3 (2026-11-24, quiet, m1_n4096_k14336, L1 prefetches): without any, Q4_K and Q8_0
// read ~25% slower; 1024, 4096 or 8192 bytes ahead were within the noise of 2048. Reading 2 weight
// rows per pass (more streams, as the F32 GEMV's 4) made Q4_0 / Q4_1 ~30% slower and Q4_K ~20% (more
// live registers, spills), Q8_0 no faster; one contiguous half per thread instead of 64 tasks, no
// faster. On a Zen 4 (2026-11-24, cold, 5 alternating rounds, min / median us), L2 prefetches 8 KiB
// ahead against L1 prefetches 2 KiB ahead: Q4_K 1120 / 1155 -> 782 / 904, Q8_0 1979 / 2093 -> 1537 /
// 1759, Q4_0 1106 / 1270 -> 864 / 1019; 4, 16 and 32 KiB ahead (L2) and 8 KiB (L1) were slower.
// The distance is chosen per CPU (kStreamPrefetchBytes, cpu/runtime/prefetch.h). On an Intel Xeon with
// AVX-512 (2 vCPUs, 2026-11-27, cold, m1_n4096_k14336, medians of 6-8 alternating rounds): 3 KiB
// against 8 KiB, Q4_K 0.89-0.94x the time, Q8_0 0.93-0.94x, Q6_K 0.98x, the Llama-3-8B Q4_K decode
// step 0.93x; 2 and 4 KiB between them; 1 KiB and 16-32 KiB no faster than 8; every second to every
// 64th line only (fewer prefetch instructions) 1.2-1.5x slower. On a Zen 4 (AMD EPYC, 2 vCPUs,
// 2026-11-27, cold, 5 alternating rounds, both with the L1 prefetch below), 8 KiB against 3 KiB:
// Q4_K m1_n4096_k14336 0.88x the time (5 of 5 faster), Q8_0 0.85x (5 of 5), Q4_K m1_n14336_k4096
// 1.02x (2 of 5), the Llama-3-8B Q4_K decode step 0.96x (4 of 5); without the L1 prefetch, 8 KiB
// was no faster than 3 KiB there for Q8_0 and the step.
// The same weights are asked for again into L1 (prefetcht0) kL1PrefetchAhead bytes ahead, by then
// in L2 or on their way there: the loads then find them in L1 instead of waiting on L2 (2026-11-27,
// the Xeon, cold, 6 alternating rounds, B/A of the medians: Q4_0 0.92x the time, Q8_0 0.96x, Q6_K
// 0.98x, Q4_K 0.96x at m1_n14336_k4096 and 1.03x at m1_n4096_k14336 (2 of 6 faster), the Llama-3-8B
// Q4_K decode step 0.98x (6 of 6); 1.5 and 2 KiB ahead were no better than 1). On the Zen 4, beside
// the 8 KiB L2 prefetches, it made Q8_0 and the step faster (the two A/Bs above), where L1 prefetches
// in place of the L2 ones were slower (cpu/runtime/prefetch.h).
inline constexpr int64_t kL1PrefetchAhead = 1024;
HWY_INLINE void PrefetchAhead(const uint8_t* at, int64_t bytes) {
  prefetch_l2(at + kStreamPrefetchBytes, static_cast<size_t>(bytes));
  prefetch_l1(at + kL1PrefetchAhead, static_cast<size_t>(bytes));
}

// out[i * ldo] = the lane sum of row i's two accumulators (every step's row dot ends here).
template <int M> HWY_INLINE void StoreRowSums(const VF* acc, const VF* acc_odd, float* out, int64_t ldo) {
  for (int i = 0; i < M; ++i) out[i * ldo] = hn::GetLane(hn::SumOfLanes(DF(), hn::Add(acc[i], acc_odd[i])));
}

// out[i * ldo] = row i of a . the weight row w (`blocks` blocks of kind K), for M quantized rows.
template <class K, int M>
HWY_INLINE void DotRowQ8(const uint8_t* HWY_RESTRICT w, int64_t blocks, const typename K::Act* a, float* out, int64_t ldo) {
  // Even and odd blocks into separate sums, so that consecutive blocks' FMAs do not wait on each other.
  VF acc[M], acc_odd[M];
  for (int i = 0; i < M; ++i) acc[i] = acc_odd[i] = hn::Zero(DF());
  if constexpr (K::kElems == 32) {
    int64_t blk = 0;
    for (; blk + 8 <= blocks; blk += 8) {  // 8 blocks a step, a constant count: no branches within
      PrefetchAhead(w + blk * K::kBytes, 8 * K::kBytes);
      DotQ8Legacy<K, M>(w + blk * K::kBytes, blk, 8, a, acc, acc_odd);
    }
    if (blk < blocks) DotQ8Legacy<K, M>(w + blk * K::kBytes, blk, static_cast<int>(blocks - blk), a, acc, acc_odd);
  } else {
    int64_t blk = 0;
    for (; blk + 2 <= blocks; blk += 2) {
      PrefetchAhead(w + blk * K::kBytes, 2 * K::kBytes);
      DotQ8Pair<M>(K{}, w + blk * K::kBytes, blk, a, acc, acc_odd);
    }
    if (blk < blocks) DotQ8Block<M>(K{}, w + blk * K::kBytes, blk, a, acc);
  }
  StoreRowSums<M>(acc, acc_odd, out, ldo);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_QUANT_INT8_DOT_INL_H_
