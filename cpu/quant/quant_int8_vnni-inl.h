// The GGUF integer dot's AVX-512 VNNI step (Highway's re-includable -inl.h pattern; only the AVX-512
// instance has one): the weight rows of every GGUF kind against int8 activations, 64 codes a step in
// one vpdpbusd, for CPUs whose AVX-512 has VNNI. Highway 1.0 names no AVX-512 target with VNNI, so these
// functions carry the AVX-512 instance's target plus avx512vnni, and rows_int8 takes them only where
// the CPU has it (cpu_avx512_vnni); TOUCHSTONE_CPU_SIMD=AVX2 or SCALAR selects an instance without them.
//
// Each block's integer sums are the 8 i32 lanes of the 256-bit step (DotQ8K4, DotQ8Block, DotQ8Legacy
// in cpu/quant/quant_int8_dot-inl.h), lane for lane, and go through the same F32 steps (AddK4Block,
// AddScaled or its lanes' FMAs, StoreRowSums): the outputs are bit for bit those of the 256-bit step.
//
// Vector uops per block of 256 weights and one activation row (loads aside: both steps fold the
// activations into their multiplies as memory operands):
//   Q4_K, 256-bit: codes 4 x 3 (and, shift, and), then per chunk of 64 codes 2 maddubs and a hadd
//     (3 uops: 2 shuffles and an add), per block two hadds of chunk pairs, a third, the scales'
//     permute and a madd: 12 + 4 x 5 + 11 = 43, i.e. 5.4 per 32 weights, 15 of them shuffles;
//   Q4_K, VNNI: codes 4 x 2 (broadcast load, masked shift, and), 4 vpdpbusd, per block the scales'
//     two word permutes, two packs, two madds, two two-source permutes, an add, an extract and an
//     add: 8 + 4 + 2 + 9 = 23, i.e. 2.9 per 32 weights, 7 of them shuffles.
//   Each further activation row adds 31 (the maddubs, hadds, madd) and 13 (the vpdpbusd, reduction).
//   Q5_K's fifth bit adds 24 a block to the first (shift, and, or per 32 codes), 13 to the second.
//   Q6_K, 256-bit: 8 steps of 32 codes, each about 4 for its codes (nibble, top bits' shift and mask,
//     or) and 3 for the row (maddubs, madd by the spread scales, add), the scales' 10 shuffles and
//     the offset term's 4: about 72, 9 per 32 weights; VNNI: 16 for the codes (two steps of 64 from
//     one load each), 6 for the scales, 4 vpdpbusd and 4 vpdpwssd, the halves' extract and adds and
//     the offset term: about 37, 4.6 per 32 weights (a further row: 28 against 15).
//   Q8_0, per 64 weights (two blocks): 256-bit, 2 x (2 signs, maddubs, madd, convert, FMA) = 12;
//     VNNI, an insert, an abs and a sign mask for the codes, then a masked negate, a vpdpbusd, a
//     convert, a scale broadcast and one FMA for the row: 8 (a further row: 10 against 5).
//   Q4_0 / Q4_1, per group of 256 weights: 256-bit, codes 4 x 4 (insert, and, shift, and), 8 maddubs,
//     4 adds, 3 hadds (9) and a madd: 38; VNNI, codes 4 x 3 (the two broadcasts, masked shift, and),
//     4 vpdpbusd, the 9 of SumBlocks4, an extract and an add: 27 (a further row: 22 against 15).
// The F32 steps after the integer sums (about 10 uops a block and row for the K kinds) are the same.
#if defined(TS_CPU_QUANT_INT8_VNNI_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_QUANT_INT8_VNNI_INL_H_
#undef TS_CPU_QUANT_INT8_VNNI_INL_H_
#else
#define TS_CPU_QUANT_INT8_VNNI_INL_H_
#endif

#include <array>
#include <cstdint>
#include <type_traits>

#include "cpu/quant/quant_int8_dot-inl.h"
#include "cpu/runtime/avx512_lanes.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

#undef TS_QUANT_VNNI_STEP
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
#define TS_QUANT_VNNI_STEP 1  // this instance has the step
// GCC 12's AVX-512 casts and extracts start from undefined vectors (a variable initialised from itself),
// which -Wuninitialized reports once they are inlined here (Highway silences the same in its own ops).
HWY_DIAGNOSTICS(push)
HWY_DIAGNOSTICS_OFF(disable : 4701, ignored "-Wuninitialized")
HWY_DIAGNOSTICS_OFF(disable : 4703, ignored "-Wmaybe-uninitialized")

// This instance's target and VNNI. (The string is the instance's own, so every function of the instance
// inlines into these functions; lambdas would not inherit it, hence none below.)
#define TS_VNNI_ATTR __attribute__((target(HWY_TARGET_STR ",avx512vnni")))

// The 64 codes of chunk c of a Q4_K / Q5_K block (sub-blocks 2c and 2c + 1: the low then the high
// nibbles of its 32 bytes at qs) in the order of the activations: the 32 bytes in both halves of a
// vector, the upper half shifted right by 4, then masked to the nibble.
TS_VNNI_ATTR HWY_INLINE __m512i NibblesK512(const uint8_t* qs) {
  const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)));
  return _mm512_and_si512(_mm512_mask_srli_epi16(v, 0xFFFF0000u, v, 4), _mm512_set1_epi8(0x0F));
}
TS_VNNI_ATTR HWY_INLINE void CodesK512(BlockQ4_K, const uint8_t* b, __m512i w[4]) {
  for (int c = 0; c < 4; ++c) w[c] = NibblesK512(b + BlockQ4_K::kRow.qs + 32 * c);
}
// Q5_K: code l of sub-block s takes bit s of qh[l] as its fifth bit (BitsTo4's shift and mask). With
// qh in both halves and the upper half shifted right by 1 once, bit 2c of each byte is the fifth bit
// of chunk c's two sub-blocks in both halves (bits 0-6 of a byte stay its own: bit 7 of a low byte
// takes the high byte's bit 0, and 2c <= 6 never reads it).
TS_VNNI_ATTR HWY_INLINE __m512i FifthBits(__m512i qh2, int c) {
  const __m512i s = c == 0 ? _mm512_slli_epi16(qh2, 4) : c == 1 ? _mm512_slli_epi16(qh2, 2) : c == 2 ? qh2 : _mm512_srli_epi16(qh2, 2);
  return _mm512_and_si512(s, _mm512_set1_epi8(0x10));
}
TS_VNNI_ATTR HWY_INLINE void CodesK512(BlockQ5_K, const uint8_t* b, __m512i w[4]) {
  const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + BlockQ5_K::kRow.qh)));
  const __m512i qh2 = _mm512_mask_srli_epi16(qh, 0xFFFF0000u, qh, 1);
  for (int c = 0; c < 4; ++c) w[c] = _mm512_or_si512(NibblesK512(b + BlockQ5_K::kRow.qs + 32 * c), FifthBits(qh2, c));
}

// The reduction of a block's four vpdpbusd results v[c] (chunk c: i32 lane 4b + l holds 4 products
// of sub-block 2c + (b >> 1), codes 16 (b & 1) + 4 l.., each sum within +-4 * 31 * 127, an i16) to
// DotQ8K4's 8 lanes: packs of chunks 0, 1 and 2, 3 to i16 (exact), madd by each group's scale (two
// codes' sums a lane), then every output lane gathers its 4 lanes of the two madds by two two-source
// permutes, an add, and an add of the two 256-bit halves.
//
// Lane 2u + e of madd p (p = 0: chunks 0, 1; 1: chunks 2, 3), u = 2b + k, holds part e of sub-block
// s = 2c + (b >> 1) of chunk c = 2p + k, over codes 16 (b & 1)..: its index among both madds' 32 lanes.
constexpr int MaddLane(int s, int h, int e) {
  const int c = s >> 1, b = 2 * (s & 1) + h;
  return 16 * (c >> 1) + 4 * b + 2 * (c & 1) + e;
}
// DotQ8K4's lane 4h + t sums half h of sub-blocks first and second (three levels: 2t and 2t + 1; two:
// t and t + 4). Permute e, lane x: part e of sub-block `first` (x < 8) or `second` (x >= 8) of lane x % 8.
template <int kMaxCode> constexpr std::array<int32_t, 16> GatherLanes(int e) {
  std::array<int32_t, 16> idx{};
  for (int x = 0; x < 16; ++x) {
    const int h = (x & 7) >> 2, t = x & 3, second = x >> 3;
    const int s = kK4ThreeLevels<kMaxCode> ? 2 * t + second : t + 4 * second;
    idx[static_cast<size_t>(x)] = MaddLane(s, h, e);
  }
  return idx;
}
template <int kMaxCode, int e> inline constexpr std::array<int32_t, 16> kGatherLanes = GatherLanes<kMaxCode>(e);
// The scale of each i16 lane of pack p of block j (of a pair, scales as LoadK4Scales: block j's 8 in
// words 8j..): word 8b + 4k + l holds chunk 2p + k's sub-block 2 (2p + k) + (b >> 1).
constexpr std::array<int16_t, 32> ScaleWords(int j, int p) {
  std::array<int16_t, 32> idx{};
  for (int x = 0; x < 32; ++x) idx[static_cast<size_t>(x)] = static_cast<int16_t>(8 * j + 2 * (2 * p + ((x & 7) >> 2)) + ((x >> 3) >> 1));
  return idx;
}
template <int j, int p> inline constexpr std::array<int16_t, 32> kScaleWords = ScaleWords(j, p);

template <class T, size_t N> TS_VNNI_ATTR HWY_INLINE __m512i LoadIndex(const std::array<T, N>& a) {
  return _mm512_loadu_si512(a.data());
}

// Block j of a pair (or a lone block) of Q4_K / Q5_K against M activation rows: DotQ8K4's integer sums
// in VNNI, then its F32 steps.
template <int M, int kMaxCode, int kBlocks, int j, class K>
TS_VNNI_ATTR HWY_INLINE void VnniK4Block(const K4Pair& s, const uint8_t* bj, int64_t blk, const ActQ8K* a, VF* acc,
                                         VF* acc_odd) {
  static_assert(4 * kMaxCode * 127 < 32768, "a vpdpbusd lane must fit i16 for the packs");
  __m512i w[4];
  CodesK512(K{}, bj, w);
  const __m512i sc = _mm512_zextsi256_si512(s.sc2);
  const __m512i s01 = _mm512_permutexvar_epi16(LoadIndex(kScaleWords<j, 0>), sc);
  const __m512i s23 = _mm512_permutexvar_epi16(LoadIndex(kScaleWords<j, 1>), sc);
  const __m512i even = LoadIndex(kGatherLanes<kMaxCode, 0>), odd = LoadIndex(kGatherLanes<kMaxCode, 1>);
  for (int i = 0; i < M; ++i) {
    const int8_t* at = a[i].q + 256 * (blk + j);
    __m512i v[4];
    for (int c = 0; c < 4; ++c) v[c] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[c], _mm512_loadu_si512(at + 64 * c));
    const __m512i q01 = _mm512_madd_epi16(_mm512_packs_epi32(v[0], v[1]), s01);
    const __m512i q23 = _mm512_madd_epi16(_mm512_packs_epi32(v[2], v[3]), s23);
    const __m512i z = _mm512_add_epi32(_mm512_permutex2var_epi32(q01, even, q23), _mm512_permutex2var_epi32(q01, odd, q23));
    const __m256i isum = _mm256_add_epi32(_mm512_castsi512_si256(z), _mm512_extracti64x4_epi64(z, 1));
    AddK4Block<kBlocks>(s, j, isum, a[i], blk, acc[i], acc_odd[i]);
  }
}
template <int M, int kBlocks, class K>
TS_VNNI_ATTR HWY_INLINE void VnniK4(const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd) {
  constexpr int kMaxCode = std::is_same_v<K, BlockQ4_K> ? 15 : 31;
  const K4Pair s = LoadK4Pair<kBlocks>(b, K::kBytes);
  VnniK4Block<M, kMaxCode, kBlocks, 0, K>(s, b, blk, a, acc, acc_odd);
  if constexpr (kBlocks == 2) VnniK4Block<M, kMaxCode, kBlocks, 1, K>(s, b + K::kBytes, blk, a, acc, acc_odd);
}

template <int M, int kBlocks, class K>
  requires kIsK4<K>
TS_VNNI_ATTR HWY_INLINE void VnniBlocks(K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd) {
  VnniK4<M, kBlocks, K>(b, blk, a, acc, acc_odd);
}

// Q6_K in 4 steps of 64 codes, step u = 2h + p over the activations 64u.. (DotQ8Block's steps (h, 2p)
// and (h, 2p + 1) side by side): the low (p = 0) or high (p = 1) nibbles of the 64 bytes of ql at
// 64h, their top two bits from qh[32h..] (bits 4p, 4p + 1 in the lower half, 4p + 2, 4p + 3 in the
// upper, which, shifted right by 2 once, reads as the lower's; a byte's bits 0-5 stay its own).
// Codes 0-63: a vpdpbusd lane is within +-4 * 63 * 127, an i16, so one vpdpwssd by a scale held in the
// low word of each i32 lane (0 in the high one) multiplies it exactly and adds it to the sum. Lane
// 4g + l of step u belongs to sub-block 4u + g; lanes x and x + 8 of the sum are DotQ8Block's lane x.
TS_VNNI_ATTR HWY_INLINE void CodesQ6(const uint8_t* b, __m512i w[4]) {
  const __m512i nibble = _mm512_set1_epi8(0x0F), top = _mm512_set1_epi8(0x30);
  for (int h = 0; h < 2; ++h) {
    const __m512i q = _mm512_loadu_si512(b + BlockQ6_K::kRow.qs + 64 * h);
    const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + BlockQ6_K::kRow.qh + 32 * h)));
    const __m512i qh2 = _mm512_mask_srli_epi16(qh, 0xFFFF0000u, qh, 2);
    w[2 * h] = _mm512_or_si512(_mm512_and_si512(q, nibble), _mm512_and_si512(_mm512_slli_epi16(qh2, 4), top));
    w[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q, 4), nibble), _mm512_and_si512(qh2, top));
  }
}
constexpr std::array<int32_t, 16> Q6ScaleLanes(int u) {
  std::array<int32_t, 16> idx{};
  for (int x = 0; x < 16; ++x) idx[static_cast<size_t>(x)] = 4 * u + (x >> 2);
  return idx;
}
template <int u> inline constexpr std::array<int32_t, 16> kQ6ScaleLanes = Q6ScaleLanes(u);
template <int M>
TS_VNNI_ATTR HWY_INLINE void VnniQ6Block(const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc) {
  const float d = LoadHalf(b + BlockQ6_K::kRow.d);
  const int8_t* scales = reinterpret_cast<const int8_t*>(b + BlockQ6_K::kRow.scales);
  __m512i w[4];
  CodesQ6(b, w);
  // The 16 scales as i16 in the low word of an i32 lane each, then spread to each step's 4 sub-blocks.
  const __m512i sc = _mm512_cvtepu16_epi32(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales))));
  const __m512i step_scales[4] = {_mm512_permutexvar_epi32(LoadIndex(kQ6ScaleLanes<0>), sc),
                                  _mm512_permutexvar_epi32(LoadIndex(kQ6ScaleLanes<1>), sc),
                                  _mm512_permutexvar_epi32(LoadIndex(kQ6ScaleLanes<2>), sc),
                                  _mm512_permutexvar_epi32(LoadIndex(kQ6ScaleLanes<3>), sc)};
  for (int i = 0; i < M; ++i) {
    const int8_t* at = a[i].q + 256 * blk;
    __m512i sum = _mm512_setzero_si512();
    for (int u = 0; u < 4; ++u)
      sum = _mm512_dpwssd_epi32(sum, _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[u], _mm512_loadu_si512(at + 64 * u)),
                                step_scales[u]);
    const hn::Vec<DI32> steps{_mm256_add_epi32(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64(sum, 1))};
    AddScaled(acc[i], hn::Add(Q6Offsets(scales, a[i].bs16 + 16 * blk), steps), d * a[i].d[blk]);
  }
}
template <int M, int kBlocks>
TS_VNNI_ATTR HWY_INLINE void VnniBlocks(BlockQ6_K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc, VF* acc_odd) {
  VnniQ6Block<M>(b, blk, a, acc);
  if constexpr (kBlocks == 2) VnniQ6Block<M>(b + BlockQ6_K::kBytes, blk + 1, a, acc_odd);
}

// Q8_0: a group of nb <= 8 blocks from blk0 (DotQ8Legacy's), two blocks of signed codes a step: the
// 64 codes' magnitudes against the activations negated where a code is negative (the 256-bit step's
// sign trick in a mask; |-128| reads as the unsigned 128), so that lanes 0-7 hold block j's 8 i32
// lanes and 8-15 block j + 1's, each as DotI8 builds them. Both blocks' F32 steps in one 512-bit FMA,
// lanes 0-7 of `both` being acc's and 8-15 acc_odd's: lane for lane the two 256-bit FMAs of the
// 256-bit step. A lone last block keeps the upper lanes (masked), and reads no activation past its own.
template <int M>
TS_VNNI_ATTR HWY_INLINE void VnniQ8Group(const uint8_t* b, int64_t blk0, int nb, const ActQ8* a, __m512* both) {
  using K = BlockQ8_0;
  const auto dh = LoadHalves8<K::kBytes>(b, nb);
  float scale[M][8];
  LegacyScales<K, M>(dh, dh, blk0, a, nullptr, scale);  // (no offsets: Q8_0 has none)
  for (int j = 0; j < nb; j += 2) {
    const bool two = j + 1 < nb;
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j * K::kBytes + K::kQs));
    const __m256i y = two ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + (j + 1) * K::kBytes + K::kQs))
                          : _mm256_setzero_si256();
    const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(x), y, 1);
    const __m512i mag = _mm512_abs_epi8(w);
    const __mmask64 neg = _mm512_movepi8_mask(w);
    const __mmask64 bytes = two ? ~__mmask64{0} : (__mmask64{1} << 32) - 1;
    for (int i = 0; i < M; ++i) {
      const __m512i at = _mm512_maskz_loadu_epi8(bytes, a[i].q + 32 * (blk0 + j));
      const __m512i isum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), mag, _mm512_mask_sub_epi8(at, neg, _mm512_setzero_si512(), at));
      const __m512 s = _mm512_insertf32x8(_mm512_set1_ps(scale[i][j]), _mm256_set1_ps(two ? scale[i][j + 1] : 0.0f), 1);
      both[i] = _mm512_mask3_fmadd_ps(_mm512_cvtepi32_ps(isum), s, both[i], two ? __mmask16{0xFFFF} : __mmask16{0x00FF});
    }
  }
}

// Q4_0 / Q4_1: a full group of 8 blocks (DotQ8Legacy's paired branch), 64 codes a step over the paired
// activations (ActQ8::qp: 64 bytes at 64p hold codes 0-15 of blocks p and p + 4, then their codes
// 16-31): blocks p and p + 4's 16 bytes of nibbles in alternate 128-bit blocks, the upper half shifted
// right by 4, masked. vpdpbusd's block b of step p then sums codes of block p (b even) or p + 4 (b
// odd); SumBlocks4 (cpu/runtime/avx512_lanes.h) of the 4 steps and the add of its halves leave block
// j's whole sum in lane j, PairedSums8's lanes (integers, exact in any order), which the same F32
// steps take.
template <class K, int M>
TS_VNNI_ATTR HWY_INLINE void VnniPairedGroup(const uint8_t* b, int64_t blk0, const ActQ8* a, VF* acc, VF* odd) {
  const auto dh = LoadHalves8<K::kBytes>(b, 8);
  const auto mh = LoadHalves8<K::kBytes>(b + K::kMinAt, K::kMinAt != 0 ? 8 : 0);
  const VF d = PairedGroupStart<K, M>(dh, mh, blk0, a, odd);
  __m512i w[4];
  for (int p = 0; p < 4; ++p) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + p * K::kBytes + K::kQs));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + (p + 4) * K::kBytes + K::kQs));
    const __m512i v = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(x), 0xF0F0, y);
    w[p] = _mm512_and_si512(_mm512_mask_srli_epi16(v, 0xFFFF0000u, v, 4), _mm512_set1_epi8(0x0F));
  }
  hn::Vec<DI32> sums[M];
  for (int i = 0; i < M; ++i) {
    const int8_t* at = a[i].qp + 32 * blk0;
    __m512i v[4];
    for (int p = 0; p < 4; ++p) v[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[p], _mm512_loadu_si512(at + 64 * p));
    const __m512i r = SumBlocks4(v[0], v[1], v[2], v[3]);
    sums[i].raw = _mm256_add_epi32(_mm512_castsi512_si256(r), _mm512_extracti64x4_epi64(r, 1));
  }
  PairedGroupEnd<M>(d, sums, blk0, a, acc);
}

// DotRowQ8 of a VNNI kind: the same groups or pairs of blocks, prefetches and accumulators. (A
// paired kind's short last group, natural order, takes the 256-bit step: DotQ8Legacy inlines here.)
template <class K, int M>
TS_VNNI_ATTR HWY_NOINLINE void DotRowQ8Vnni(const uint8_t* HWY_RESTRICT w, int64_t blocks, const typename K::Act* a,
                                            float* out, int64_t ldo) {
  VF acc[M], acc_odd[M];
  int64_t blk = 0;
  if constexpr (K::kElems != 32) {
    for (int i = 0; i < M; ++i) acc[i] = acc_odd[i] = hn::Zero(DF());
    for (; blk + 2 <= blocks; blk += 2) {
      PrefetchAhead(w + blk * K::kBytes, 2 * K::kBytes);
      VnniBlocks<M, 2>(K{}, w + blk * K::kBytes, blk, a, acc, acc_odd);
    }
    if (blk < blocks) VnniBlocks<M, 1>(K{}, w + blk * K::kBytes, blk, a, acc, acc);
  } else if constexpr (K::kPaired) {
    for (int i = 0; i < M; ++i) acc[i] = acc_odd[i] = hn::Zero(DF());
    for (; blk + 8 <= blocks; blk += 8) {
      PrefetchAhead(w + blk * K::kBytes, 8 * K::kBytes);
      VnniPairedGroup<K, M>(w + blk * K::kBytes, blk, a, acc, acc_odd);
    }
    if (blk < blocks) DotQ8Legacy<K, M>(w + blk * K::kBytes, blk, static_cast<int>(blocks - blk), a, acc, acc_odd);
  } else {
    __m512 both[M];
    for (int i = 0; i < M; ++i) both[i] = _mm512_setzero_ps();
    for (; blk + 8 <= blocks; blk += 8) {
      PrefetchAhead(w + blk * K::kBytes, 8 * K::kBytes);
      VnniQ8Group<M>(w + blk * K::kBytes, blk, 8, a, both);
    }
    if (blk < blocks) VnniQ8Group<M>(w + blk * K::kBytes, blk, static_cast<int>(blocks - blk), a, both);
    for (int i = 0; i < M; ++i) {
      acc[i].raw = _mm512_castps512_ps256(both[i]);
      acc_odd[i].raw = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(both[i]), 1));
    }
  }
  StoreRowSums<M>(acc, acc_odd, out, ldo);
}

#undef TS_VNNI_ATTR
HWY_DIAGNOSTICS(pop)
#else
#define TS_QUANT_VNNI_STEP 0
#endif

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_QUANT_INT8_VNNI_INL_H_
