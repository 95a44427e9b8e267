// The integer decode GEMV of gemm_gptq / gemm_awq on their tiles (cpu/quant/gptq_tiles.h). A tile's columns
// are vector lanes; one 32-row activation block at a time, the codes of each lane's column are
// multiplied by the block's int8 activations and summed as integers, then scaled by the block's d
// into an F32 sum per group run, which the run's f16 scale and zero turn into the output.
//
// On x86 (AVX2, and AVX-512 running the same 256-bit code: the GEMV is bound by memory) a word of
// eight 4-bit codes splits into its even and odd rows' nibbles as bytes, each multiplied by four int8
// activations in one unsigned x signed byte multiply with pairwise i16 sums (maddubs: no pair can
// saturate, 2 * 15 * 127 < 2^15, nor a block's four words of them, 8 * 2 * 15 * 127 < 2^15); 8-bit
// codes split into i16 pairs for a 16-bit multiply with pairwise i32 sums (madd). Other targets
// shift each code out to an int32 lane.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/quant/gptq_tile_gemv.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cstring>

#include "cpu/quant/gptq_tiles.h"
#include "cpu/runtime/prefetch.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A block's activations for each of the M rows: int8 for 4-bit codes, int16 for 8-bit ones.
template <int Bits> using ActT = std::conditional_t<Bits == 4, int8_t, int16_t>;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
using DF = hn::Full256<float>;
using DI = hn::Full256<int32_t>;

HWY_INLINE __m256i Broadcast32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// A word's codes split into its even rows' and its odd rows' (4-bit: bytes; 8-bit: i16 lanes).
template <int Bits> HWY_INLINE void SplitRows(__m256i word, __m256i& even, __m256i& odd) {
  if constexpr (Bits == 4) {
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    even = _mm256_and_si256(word, nibble);
    odd = _mm256_and_si256(_mm256_srli_epi16(word, 4), nibble);
  } else {
    even = _mm256_and_si256(word, _mm256_set1_epi32(0x00FF00FF));
    odd = _mm256_srli_epi16(word, 8);
  }
}

// acc plus the codes times the activations, products summed in adjacent pairs (4-bit: into i16
// lanes, maddubs; 8-bit: into i32 lanes, madd).
template <int Bits>
HWY_INLINE __m256i MulAddPairs(__m256i acc, __m256i even, __m256i a_even, __m256i odd, __m256i a_odd) {
  if constexpr (Bits == 4)
    return _mm256_add_epi16(acc, _mm256_add_epi16(_mm256_maddubs_epi16(even, a_even), _mm256_maddubs_epi16(odd, a_odd)));
  else
    return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(even, a_even), _mm256_madd_epi16(odd, a_odd)));
}

// The integer sums over one 32-row block of the V x 8 columns whose words start at w (word rows 32
// words apart), for each of the M activation rows a[i]: sums[i * V + v].
template <int Bits, int M, int V>
HWY_INLINE void VectorSums(const uint32_t* HWY_RESTRICT w, const ActT<Bits>* const* a, hn::Vec<DI>* sums) {
  constexpr int per = 32 / Bits;
  __m256i acc[M][V];
  for (int i = 0; i < M; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_si256();
  // Rolled: unrolled, the compiler starts every word's multiplies at once and spills their results.
#pragma GCC unroll 1
  for (int u = 0; u < kActBlock / per; ++u) {
    __m256i a_even[M], a_odd[M];
    for (int i = 0; i < M; ++i) {
      a_even[i] = Broadcast32(a[i] + per * u);
      a_odd[i] = Broadcast32(a[i] + per * u + per / 2);
    }
    for (int v = 0; v < V; ++v) {
      __m256i even, odd;
      SplitRows<Bits>(_mm256_load_si256(reinterpret_cast<const __m256i*>(w + u * kTileCols + 8 * v)), even, odd);
      for (int i = 0; i < M; ++i) acc[i][v] = MulAddPairs<Bits>(acc[i][v], even, a_even[i], odd, a_odd[i]);
    }
  }
  // 4-bit sums are i16 pairs still: one more pairwise sum widens them.
  for (int i = 0; i < M; ++i)
    for (int v = 0; v < V; ++v)
      sums[i * V + v].raw = Bits == 4 ? _mm256_madd_epi16(acc[i][v], _mm256_set1_epi16(1)) : acc[i][v];
}

// Vectors of columns summed side by side: the activations' broadcasts are shared by V vectors, as
// many as registers hold with the sums of M rows.
template <int M> constexpr int kVectors = M == 1 ? 4 : M == 2 ? 2 : 1;
#else
using DF = hn::CappedTag<float, 8>;
using DI = hn::RebindToSigned<DF>;

// As above, N columns, each code shifted out to an int32 lane.
template <int Bits, int M, int V>
HWY_INLINE void VectorSums(const uint32_t* HWY_RESTRICT w, const ActT<Bits>* const* a, hn::Vec<DI>* sums) {
  static_assert(V == 1, "one vector at a time on the portable targets");
  const DI di;
  const hn::RebindToUnsigned<DF> du;
  constexpr int per = 32 / Bits;
  for (int i = 0; i < M; ++i) sums[i] = hn::Zero(di);
  for (int u = 0; u < kActBlock / per; ++u) {
    const auto word = hn::LoadU(du, w + u * kTileCols);
    for (int t = 0; t < per; ++t) {
      const auto code = hn::BitCast(di, hn::And(hn::ShiftRightSame(word, Bits * t), hn::Set(du, (1u << Bits) - 1)));
      // Where row t of the word sits in the activations' even-then-odd order (gptq_tiles.h).
      const int at = u * per + (t % 2) * (per / 2) + t / 2;
      for (int i = 0; i < M; ++i) sums[i] = hn::Add(sums[i], hn::Mul(code, hn::Set(di, a[i][at])));
    }
  }
}
template <int M> constexpr int kVectors = 1;
#endif

using VF = hn::Vec<DF>;

// How far ahead of the block being summed its stream is prefetched (into L2). On a Zen 4 (2026-11-24,
// cold, 5 alternating rounds, min / median us, m1_n4096_k4096) against L1 prefetches 4 KiB ahead:
// GPTQ 8-bit 628 / 641 -> 397 / 459, AWQ 246 / 247 -> 209 / 231, GPTQ 4-bit 227 / 241 -> 211 / 238.
constexpr int64_t kPrefetchBytes = 8192;

// The zero points of the tile's columns c0 .. c0 + N - 1 for one run, as F32 (offset added).
template <int Bits> HWY_INLINE VF Zeros(const uint8_t* fields, int64_t c0, int offset) {
  const DF df;
  const DI di;
  const hn::Rebind<uint8_t, DI> d8;
  auto z = hn::PromoteTo(di, hn::LoadU(d8, fields + (Bits == 8 ? c0 : c0 % 16)));
  if constexpr (Bits == 4) z = hn::And(hn::ShiftRightSame(z, static_cast<int>(4 * (c0 / 16))), hn::Set(di, 15));
  return hn::ConvertTo(df, hn::Add(z, hn::Set(di, offset)));
}

// acc[i * 32 + c] += a[i] . W[:, 32 tile + c] for the M rows. A run's columns are walked V vectors
// at a time down the run's blocks (its codes stay in L1 for the next vectors), the blocks' integer
// sums scaled by their d into a sum per row, then the run's scale and zero folded in. (Blocks inside
// the column loop would make each block's activations loop-invariant, and the compiler would hoist
// them all into spilled registers.)
template <int Bits, int M>
HWY_INLINE void Tile(const GroupTiles& w, const TileActivations& a, int64_t tile, float* HWY_RESTRICT acc) {
  const DF df;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  constexpr int64_t per = 32 / Bits, block_bytes = kActBlock * kTileCols * Bits / 8;
  constexpr int V = kVectors<M>;
  const int64_t runs = static_cast<int64_t>(w.runs.size()), blocks = w.rows / kActBlock;
  const uint32_t* codes = w.codes.data() + tile * w.tile_words();
  const uint8_t* heads = w.heads.data() + tile * runs * w.head_bytes();
  const ActT<Bits>* act = nullptr;
  if constexpr (Bits == 4) act = a.q8.data();
  else act = a.q16.data();
  for (int64_t ri = 0; ri < runs; ++ri) {
    const TileRun& run = w.runs[static_cast<size_t>(ri)];
    const uint8_t* head = heads + ri * w.head_bytes();
    for (int64_t c0 = 0; c0 < kTileCols; c0 += V * N) {
      VF sum[M * V];
      for (int i = 0; i < M * V; ++i) sum[i] = hn::Zero(df);
      for (int64_t r0 = run.first; r0 < run.first + run.rows; r0 += kActBlock) {
        const uint32_t* block = codes + r0 / per * kTileCols;
        if (c0 == 0) prefetch_l2(reinterpret_cast<const uint8_t*>(block) + kPrefetchBytes, block_bytes);
        const ActT<Bits>* rows[M];
        for (int i = 0; i < M; ++i) rows[i] = act + i * w.rows + r0;
        hn::Vec<DI> isum[M * V];
        VectorSums<Bits, M, V>(block + c0, rows, isum);
        for (int i = 0; i < M; ++i) {
          const VF d = hn::Set(df, a.d[static_cast<size_t>(i * blocks + r0 / kActBlock)]);
          for (int v = 0; v < V; ++v) sum[i * V + v] = hn::MulAdd(hn::ConvertTo(df, isum[i * V + v]), d, sum[i * V + v]);
        }
      }
      for (int v = 0; v < V; ++v) {
        const int64_t c = c0 + v * N;
        const VF s = hn::PromoteTo(df, hn::LoadU(hn::Rebind<hwy::float16_t, DF>(), reinterpret_cast<const hwy::float16_t*>(head) + c));
        const VF z = Zeros<Bits>(head + 2 * kTileCols, c, w.zero_offset);
        for (int i = 0; i < M; ++i) {
          float* o = acc + i * kTileCols + c;
          const VF centred = hn::NegMulAdd(z, hn::Set(df, a.run_sum[static_cast<size_t>(i * runs + ri)]), sum[i * V + v]);
          hn::Store(hn::MulAdd(s, centred, hn::Load(df, o)), df, o);
        }
      }
    }
  }
}

template <int Bits, int M>
HWY_INLINE void TilesOf(const GroupTiles& w, const TileActivations& a, int64_t t0, int64_t t1, float* out, int64_t ldo) {
  for (int64_t t = t0; t < t1; ++t) {
    HWY_ALIGN float acc[M * kTileCols] = {};
    Tile<Bits, M>(w, a, t, acc);
    const int64_t cols = std::min(kTileCols, w.n - t * kTileCols);
    for (int i = 0; i < M; ++i) std::copy_n(acc + i * kTileCols, cols, out + i * ldo + t * kTileCols);
  }
}

template <int Bits>
HWY_INLINE void TilesFor(const GroupTiles& w, const TileActivations& a, int64_t t0, int64_t t1, float* out, int64_t ldo) {
  switch (a.m) {
    case 1: return TilesOf<Bits, 1>(w, a, t0, t1, out, ldo);
    case 2: return TilesOf<Bits, 2>(w, a, t0, t1, out, ldo);
    case 3: return TilesOf<Bits, 3>(w, a, t0, t1, out, ldo);
    default: return TilesOf<Bits, 4>(w, a, t0, t1, out, ldo);
  }
}

HWY_FLATTEN void TileGemv(const GroupTiles& w, const TileActivations& a, int64_t t0, int64_t t1, float* out, int64_t ldo) {
  if (w.bits == 4) return TilesFor<4>(w, a, t0, t1, out, ldo);
  TilesFor<8>(w, a, t0, t1, out, ldo);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(TileGemv);

void tile_gemv(const GroupTiles& w, const TileActivations& a, float* out, int64_t ldo) {
  // Tasks of about 256 KiB of codes, taken in turn: a thread the machine delays costs a task, not
  // half the call; each task's tiles are one contiguous stream.
  const int64_t bytes = w.tiles * w.tile_words() * 4;
  const int64_t tasks = std::clamp<int64_t>(bytes / (1 << 18), 1, std::min<int64_t>(64, w.tiles));
  parallel_tasks(tasks, [&](int64_t t) {
    HWY_DYNAMIC_DISPATCH(TileGemv)(w, a, w.tiles * t / tasks, w.tiles * (t + 1) / tasks, out, ldo);
  });
}

}  // namespace ts::cpu
#endif
