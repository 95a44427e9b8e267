// The steps of the GGUF integer dot (cpu/quant/quant_int8_dot-inl.h), per SIMD target (Highway's
// re-includable -inl.h pattern): one set of functions in two forms. On x86 from AVX2 up, 32 codes a
// step in 256-bit intrinsics (maddubs and madd, the scale and nibble shuffles, the f16 scales widened
// 8 at a time); on any other target, a few codes a step widened to int32 in Highway's portable ops.
// The dots are written once over them.
#if defined(TS_CPU_QUANT_INT8_STEPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_QUANT_INT8_STEPS_INL_H_
#undef TS_CPU_QUANT_INT8_STEPS_INL_H_
#else
#define TS_CPU_QUANT_INT8_STEPS_INL_H_
#endif

#include <cstdint>

#include "cpu/quant/quant_decode-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// Q4_K / Q5_K's 8 scales and 8 mins as bytes in two words each (ggml's get_scale_min_k4 done on
// 32-bit words: bytes 0-3 are scales 0-3 and bits 6-7 of scales 4-7, 4-7 the same for the mins,
// 8-11 the low nibbles of scales 4-7 and the mins' in the high nibbles).
HWY_INLINE void ScalesMinsK4(const uint8_t* q, uint32_t sc[2], uint32_t mn[2]) {
  uint32_t u[3];  // three loads straight from the block, not a copy read back from the stack
  for (int w = 0; w < 3; ++w) hwy::CopyBytes<4>(q + 4 * w, &u[w]);
  sc[0] = u[0] & 0x3F3F3F3Fu;
  sc[1] = (u[2] & 0x0F0F0F0Fu) | ((u[0] >> 2) & 0x30303030u);
  mn[0] = u[1] & 0x3F3F3F3Fu;
  mn[1] = ((u[2] >> 4) & 0x0F0F0F0Fu) | ((u[1] >> 2) & 0x30303030u);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// 32 codes per step (AVX-512 targets run the same 256-bit code: the GEMV is bound by memory).
using D8 = hn::Full256<uint8_t>;
using DI32 = hn::Full256<int32_t>;
HWY_INLINE __m256i LoadA8(const int8_t* a) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)); }
// sum of codes w[l] * a[l] over l, in 8 partial i32 lanes.
HWY_INLINE hn::Vec<DI32> DotU8(hn::Vec<D8> w, const int8_t* a, int /*l*/) {
  return hn::Vec<DI32>{_mm256_madd_epi16(_mm256_maddubs_epi16(w.raw, LoadA8(a)), _mm256_set1_epi16(1))};
}
// A sub-block scale for the 32 codes of one step: i16 lanes, the first 8 weighting codes 0-15 and the
// last 8 codes 16-31 (Q6_K's sub-blocks of 16 take two scales in one step).
using StepScale = __m256i;
// Q6_K's 16 int8 scales as i16: 0-7 in both halves of `low`, 8-15 in both halves of `high`.
struct Q6Scales {
  __m256i low, high;
};
HWY_INLINE Q6Scales LoadQ6Scales(const int8_t* s) {
  const __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  return {_mm256_permute2x128_si256(v, v, 0x00), _mm256_permute2x128_si256(v, v, 0x11)};
}
// i16 lane pair (2a, 2a + 1) of v across the lanes of its low half, (2b, 2b + 1) across the high.
HWY_INLINE __m256i SpreadI16(__m256i v, int a, int b) {
  const char x = static_cast<char>(2 * a), y = static_cast<char>(2 * b);
  return _mm256_shuffle_epi8(v, _mm256_setr_epi8(x, x + 1, x, x + 1, x, x + 1, x, x + 1, x, x + 1, x, x + 1, x, x + 1,
                                                 x, x + 1, y, y + 1, y, y + 1, y, y + 1, y, y + 1, y, y + 1, y, y + 1,
                                                 y, y + 1, y, y + 1));
}
// The scales of sub-blocks 8h + 2j and 8h + 2j + 1, over codes 0-15 and 16-31 of a step.
HWY_INLINE StepScale Q6Pair(const Q6Scales& s, int h, int j) { return SpreadI16(h == 0 ? s.low : s.high, 2 * j, 2 * j + 1); }
// sum_s sc_s * bs16_s over a Q6_K block's 16 sub-blocks (the partial sums in i32 lanes).
HWY_INLINE hn::Vec<DI32> Q6ScaledSums(const int8_t* s, const int16_t* bs16) {
  const __m256i sc = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  return hn::Vec<DI32>{_mm256_madd_epi16(sc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bs16)))};
}
// Q4_K / Q5_K's 8 scales and 8 mins of kBlocks (1 or 2) blocks as i16, those of block j (at
// b + j * stride) in 128-bit half j of sc and mn (of one block: the other halves 0). ScalesMinsK4 on
// the words of one vector, both blocks' at once: from u = (u0, u1, u2, -), lo = u & 0x3F.. is
// (scales 0-3, mins 0-3) and hi = ((u2, u2 >> 4) & 0x0F..) | ((u0, u1) >> 2 & 0x30..) is
// (scales 4-7, mins 4-7). (16 bytes read from b + 4: the 4 past the 12 stay inside the block, in
// its codes, and reach no used lane.)
template <int kBlocks>
HWY_INLINE void LoadK4Scales(const uint8_t* b, int64_t stride, __m256i& sc, __m256i& mn) {
  const __m128i u0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + BlockQ4_K::kRow.scales));
  const __m256i u = kBlocks == 1 ? _mm256_zextsi128_si256(u0)
                                 : _mm256_inserti128_si256(_mm256_castsi128_si256(u0),
                                                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + stride + BlockQ4_K::kRow.scales)), 1);
  const __m256i lo = _mm256_and_si256(u, _mm256_set1_epi8(0x3F));
  const __m256i u22 = _mm256_srlv_epi32(_mm256_shuffle_epi32(u, _MM_SHUFFLE(2, 2, 2, 2)), _mm256_setr_epi32(0, 4, 0, 0, 0, 4, 0, 0));
  const __m256i hi = _mm256_or_si256(_mm256_and_si256(u22, _mm256_set1_epi8(0x0F)),
                                     _mm256_and_si256(_mm256_srli_epi32(u, 2), _mm256_set1_epi8(0x30)));
  const __m256i v = _mm256_unpacklo_epi32(lo, hi);  // per half: scales 0-7, then mins 0-7
  sc = _mm256_unpacklo_epi8(v, _mm256_setzero_si256());
  mn = _mm256_unpackhi_epi8(v, _mm256_setzero_si256());
}
// As DotU8, each code's product also times its scale in `scale`.
HWY_INLINE hn::Vec<DI32> DotU8Scaled(hn::Vec<D8> w, const int8_t* a, int /*l*/, StepScale scale) {
  return hn::Vec<DI32>{_mm256_madd_epi16(_mm256_maddubs_epi16(w.raw, LoadA8(a)), scale)};
}
// The bits `mask` << from of each byte moved to bit 4 on (Q5_K's fifth bit, Q6_K's top two): one
// 16-bit shift, then an AND by mask << 4, one constant whatever `from` is (so a block's steps share
// it). The bits a shift carries in from the neighbouring byte land outside mask << 4: below bit 4 on
// a left shift, at bits 12 - from.. on a right one, above the field since from + its width <= 8.
HWY_INLINE hn::Vec<D8> BitsTo4(hn::Vec<D8> v, int from, int mask) {
  const __m256i s = from < 4 ? _mm256_slli_epi16(v.raw, 4 - from) : from == 4 ? v.raw : _mm256_srli_epi16(v.raw, from - 4);
  return hn::Vec<D8>{_mm256_and_si256(s, _mm256_set1_epi8(static_cast<char>(mask << 4)))};
}
// Signed codes: |w| times a with w's sign (never -128 * -128: the activations stay within +-127).
HWY_INLINE hn::Vec<DI32> DotI8(hn::Vec<D8> w, const int8_t* a, int /*l*/) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w.raw, w.raw), _mm256_sign_epi8(LoadA8(a), w.raw));
  return hn::Vec<DI32>{_mm256_madd_epi16(p, _mm256_set1_epi16(1))};
}
// The 32 codes of Q4_0 / Q4_1: the low nibbles of p[0..15], then the high ones.
// (The 16 bytes in both halves, the upper half shifted right by 4: three instructions.)
HWY_INLINE hn::Vec<D8> Nibbles32(const uint8_t* p, int /*l*/) {
  const __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return hn::Vec<D8>{_mm256_and_si256(_mm256_srlv_epi64(v, _mm256_set_epi64x(4, 4, 0, 0)), _mm256_set1_epi8(0xF))};
}
// Q4_0 / Q4_1's codes of blocks p and p + 4 of a group of 8 (their qs at x and y) in the order of the
// paired activations (ActQ8::qp): [X 0-15 | Y 0-15] in lo, [X 16-31 | Y 16-31] in hi.
// The low nibbles of v's bytes in lo, the high ones in hi.
HWY_INLINE void SplitNibbles(__m256i v, __m256i& lo, __m256i& hi) {
  const __m256i mask = _mm256_set1_epi8(0xF);
  lo = _mm256_and_si256(v, mask);
  hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
}
HWY_INLINE void NibblePair(const uint8_t* x, const uint8_t* y, __m256i& lo, __m256i& hi) {
  SplitNibbles(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x))),
                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(y)), 1),
               lo, hi);
}
// Per activation row i, lane j of sums[i] = block j's 32 codes times their activations, for a full
// group of 8 Q4_0 / Q4_1 blocks at b (from block blk0 of the row). Two blocks per step, their products
// summed in i16 as far as they fit: a maddubs lane is 2 products of at most 15 * 127, so the add of the
// two halves' maddubs (4 products) and two pairwise adds (16 products, <= 30480 < 2^15) cannot wrap;
// then one madd per row and group widens to i32 (lanes in block order: the adds keep them so).
template <class K, int M>
HWY_INLINE void PairedSums8(const uint8_t* b, int64_t blk0, const ActQ8* a, hn::Vec<DI32>* sums) {
  __m256i even[M], low_pairs[M];
  for (int p = 0; p < 4; ++p) {
    __m256i lo, hi;
    NibblePair(b + p * K::kBytes + K::kQs, b + (p + 4) * K::kBytes + K::kQs, lo, hi);
    for (int i = 0; i < M; ++i) {
      const int8_t* at = a[i].qp + 32 * blk0 + 64 * p;
      const __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(lo, LoadA8(at)), _mm256_maddubs_epi16(hi, LoadA8(at + 32)));
      if (p % 2 == 0)
        even[i] = s;
      else if (p == 1)
        low_pairs[i] = _mm256_hadd_epi16(even[i], s);  // blocks 0, 1 | 4, 5: 4 sums of 8 products each
      else
        sums[i].raw = _mm256_madd_epi16(_mm256_hadd_epi16(low_pairs[i], _mm256_hadd_epi16(even[i], s)), _mm256_set1_epi16(1));
    }
  }
}
// The f16 values at p, p + kStride, .. (the first n of 8, the rest 0) in the lanes of a vector:
// inserted from memory one by one (a vector built from 8 two-byte stores would stall on store
// forwarding), then lanes j.. of them widened.
// v into u16 lane j (a constant once the callers' loops unroll: the instruction takes an immediate).
HWY_INLINE __m128i InsertU16(__m128i h, uint16_t v, int j) {
  switch (j) {
    case 0: return _mm_insert_epi16(h, v, 0);
    case 1: return _mm_insert_epi16(h, v, 1);
    case 2: return _mm_insert_epi16(h, v, 2);
    case 3: return _mm_insert_epi16(h, v, 3);
    case 4: return _mm_insert_epi16(h, v, 4);
    case 5: return _mm_insert_epi16(h, v, 5);
    case 6: return _mm_insert_epi16(h, v, 6);
    default: return _mm_insert_epi16(h, v, 7);
  }
}
template <int64_t kStride> HWY_INLINE __m128i LoadHalves8(const uint8_t* p, int n) {
  __m128i h = _mm_setzero_si128();
  for (int j = 0; j < 8; ++j)
    if (j < n) {
      uint16_t v;
      hwy::CopyBytes<2>(p + j * kStride, &v);
      h = InsertU16(h, v, j);
    }
  return h;
}
HWY_INLINE hn::Vec<hn::Full256<float>> F16Lanes(__m128i h, int /*j*/) { return hn::Vec<hn::Full256<float>>{_mm256_cvtph_ps(h)}; }
// x = p's f16 times f, y = the next f16 times f, each across the lanes (one conversion for both).
HWY_INLINE void HalvesTimes(const uint8_t* p, float f, hn::Vec<hn::Full256<float>>& x, hn::Vec<hn::Full256<float>>& y) {
  uint32_t w;
  hwy::CopyBytes<4>(p, &w);
  const __m128 v = _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(w))), _mm_set1_ps(f));
  x = hn::Vec<hn::Full256<float>>{_mm256_broadcastss_ps(v)};
  y = hn::Vec<hn::Full256<float>>{_mm256_broadcastss_ps(_mm_movehdup_ps(v))};
}
#else
// Any other target: a few codes per step, widened to int32.
using D8 = hn::CappedTag<uint8_t, 4>;
using DI32 = hn::Rebind<int32_t, D8>;
HWY_INLINE hn::Vec<DI32> WidenA8(const int8_t* a) { return hn::PromoteTo(DI32(), hn::LoadU(hn::Rebind<int8_t, D8>(), a)); }
HWY_INLINE hn::Vec<DI32> DotU8(hn::Vec<D8> w, const int8_t* a, int /*l*/) {
  return hn::Mul(hn::PromoteTo(DI32(), w), WidenA8(a));
}
// The scales of a step's codes 0-15 and 16-31 (a step of at most 4 codes never straddles them).
struct StepScale {
  int lo, hi;
};
struct Q6Scales {
  const int8_t* s;
};
HWY_INLINE Q6Scales LoadQ6Scales(const int8_t* s) { return {s}; }
HWY_INLINE StepScale Q6Pair(const Q6Scales& s, int h, int j) { return {s.s[8 * h + 2 * j], s.s[8 * h + 2 * j + 1]}; }
// A scalar sum as a vector: lane 0 holds it, the others 0 (the final lane sum adds it once).
HWY_INLINE hn::Vec<DI32> InLane0(int32_t v) { return hn::IfThenElseZero(hn::FirstN(DI32(), 1), hn::Set(DI32(), v)); }
HWY_INLINE hn::Vec<DI32> Q6ScaledSums(const int8_t* s, const int16_t* bs16) {
  int32_t t = 0;
  for (int j = 0; j < 16; ++j) t += s[j] * bs16[j];
  return InLane0(t);
}
struct K4Scales {
  uint8_t sc[8], mn[8];
};
HWY_INLINE K4Scales LoadK4Scales(const uint8_t* q) {
  uint32_t sc[2], mn[2];
  ScalesMinsK4(q, sc, mn);
  K4Scales s;
  hwy::CopyBytes<8>(sc, s.sc);
  hwy::CopyBytes<8>(mn, s.mn);
  return s;
}
HWY_INLINE StepScale K4Scale(const K4Scales& s, int c) { return {s.sc[c], s.sc[c]}; }
HWY_INLINE hn::Vec<DI32> K4ScaledMins(const K4Scales& s, const int16_t* bs32) {
  int32_t t = 0;
  for (int c = 0; c < 8; ++c) t += s.mn[c] * bs32[c];
  return InLane0(t);
}
HWY_INLINE hn::Vec<DI32> DotU8Scaled(hn::Vec<D8> w, const int8_t* a, int l, StepScale scale) {
  return hn::Mul(DotU8(w, a, l), hn::Set(DI32(), l < 16 ? scale.lo : scale.hi));
}
HWY_INLINE hn::Vec<D8> BitsTo4(hn::Vec<D8> v, int from, int mask) {
  return hn::ShiftLeft<4>(hn::And(hn::ShiftRightSame(v, from), hn::Set(D8(), static_cast<uint8_t>(mask))));
}
HWY_INLINE hn::Vec<DI32> DotI8(hn::Vec<D8> w, const int8_t* a, int /*l*/) {
  return hn::Mul(hn::PromoteTo(DI32(), hn::BitCast(hn::Rebind<int8_t, D8>(), w)), WidenA8(a));
}
HWY_INLINE hn::Vec<D8> Nibbles32(const uint8_t* p, int l) {
  const hn::Vec<D8> v = hn::LoadU(D8(), p + (l & 15));
  return l < 16 ? hn::And(v, hn::Set(D8(), 0xF)) : hn::ShiftRight<4>(v);
}
struct Halves8 {
  uint16_t v[8];
};
template <int64_t kStride> HWY_INLINE Halves8 LoadHalves8(const uint8_t* p, int n) {
  Halves8 h{};
  for (int j = 0; j < 8 && j < n; ++j) hwy::CopyBytes<2>(p + j * kStride, &h.v[j]);
  return h;
}
HWY_INLINE void HalvesTimes(const uint8_t* p, float f, hn::Vec<hn::Rebind<float, DI32>>& x, hn::Vec<hn::Rebind<float, DI32>>& y) {
  x = hn::Set(hn::Rebind<float, DI32>(), LoadHalf(p) * f);
  y = hn::Set(hn::Rebind<float, DI32>(), LoadHalf(p + 2) * f);
}
HWY_INLINE hn::Vec<hn::Rebind<float, DI32>> F16Lanes(const Halves8& h, int j) {
  const hn::Rebind<float, DI32> df;
  return hn::PromoteTo(df, hn::LoadU(hn::Rebind<hwy::float16_t, decltype(df)>(), reinterpret_cast<const hwy::float16_t*>(h.v + j)));
}
#endif
using DF = hn::Rebind<float, DI32>;
using VF = hn::Vec<DF>;
using V8 = hn::Vec<D8>;
inline constexpr int kN8 = static_cast<int>(hn::MaxLanes(D8()));  // codes per step: divides 16
inline constexpr int kNF = static_cast<int>(hn::MaxLanes(DF()));  // at most 8

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_QUANT_INT8_STEPS_INL_H_
