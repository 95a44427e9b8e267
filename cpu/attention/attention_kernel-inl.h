// The cpu attention engine's kernel, per SIMD target (Highway's re-includable -inl.h pattern): a
// block of query rows (F32) against a range of key rows, online softmax over tiles of keys, reading
// only keys some row can see (rows outside the visible range may hold NaN). Rows go through a tile
// kRowGroup at a time, so each key and value row is read from memory once for the group (GQA heads of
// one kv head), in its own element type (F16, BF16, I8, F8 converted in registers, quantized rows'
// scales folded into the scores and softmax weights). Each element type is instantiated in its own
// translation unit (cpu/attention/attention_elem.inc), so that none of them is slow to compile alone.
// Its rows come from cpu/attention/attention_rows-inl.h.
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

#include "cpu/attention/attention_core.h"
#include "cpu/attention/attention_kernels.h"
#include "cpu/attention/attention_rows-inl.h"
#include "cpu/attention/int8_scores.h"
#include "cpu/runtime/prefetch.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// Query rows that share each load (and conversion) of a key and value row: the 4 query heads of a
// Llama-style kv head at once, so a row is converted from the pool's type once, not once per pair.
// The portable fallbacks (EMU128, SCALAR) run on no machine that is timed here: one row at a time
// there, so that their compile (every kernel instance again, in emulated lanes) stays small.
constexpr bool kFallback = HWY_TARGET >= HWY_EMU128;
constexpr int kRowGroup = kFallback ? 1 : 4;
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
  // The scoring pass's requests (RowPrefetch::keys), made by the kernel's own loop.
  const Int8KeyPrefetch pf{prefetch.rows.k,
                           prefetch.rows.v,
                           prefetch.k_scoring,
                           prefetch.v_scoring,
                           prefetch.rows.n + prefetch.rows.ahead,
                           static_cast<size_t>(prefetch.kbytes),
                           static_cast<size_t>(prefetch.vbytes)};
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
        prefetch.stop();  // the first call asked for the rows already
        continue;
      }
      if (r1 - r0 >= 2) {
        StepRows<2>(task, blk, r0, a, b - a, rows, off, dk, dv, scale, prefetch);
        r0 += 2;
        prefetch.stop();
        continue;
      }
    }
    StepRows<1>(task, blk, r0, a, b - a, rows, off, dk, dv, scale, prefetch);
    r0 += 1;
    prefetch.stop();
  }
}

// Starts a task again, from its first key, through exact F32 copies of its rows (the F32 kernel,
// which dequantizes element by element as the reference does): for the rare tiles the element
// kernels' lanes or folded scales would get wrong. Out of line, so their loops keep their shape.
HWY_NOINLINE inline void AttendExactCopies(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale,
                                           DType dt) {
  std::fill(task.m, task.m + blk.rows, -std::numeric_limits<float>::infinity());
  std::fill(task.l, task.l + blk.rows, 0.0f);
  std::fill(task.acc, task.acc + blk.rows * kv.dv, 0.0f);
  attend_f32(task, blk, kv, scale, dt);
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
  const int64_t ahead = paged ? kPrefetchPaged : PrefetchAffineKeys(dk * static_cast<int64_t>(sizeof(E)));
  const bool cross = paged && std::is_same_v<E, int8_t> && kInt8Target && blk.q8;  // RowPrefetch::cross
  const int64_t listed = paged ? kTile : ahead;  // row entries past a tile: those the prefetches ask for
  for (int64_t t0 = task.j0; t0 < task.j1; t0 += kTile) {
    const int64_t t1 = std::min(t0 + kTile, task.j1);
    // Not structured bindings here or below: lambdas capture them, which clang before 16 refuses.
    const std::pair<int64_t, int64_t> used = seen(0, blk.rows, t0, t1);
    const int64_t ua = used.first, ub = used.second;
    if (ua >= ub) continue;
    if constexpr (std::is_same_v<E, float>) {
      if (gathered) GatheredRows(dt, kv, ua, ub, rows);
      else DirectRows(kv, ua, ub, task.j1, listed, rows);
    } else {
      DirectRows(kv, ua, ub, task.j1, listed, rows);
      if (rows.odd_scale) [[unlikely]] {
        if (blk.q8) {  // the run starts again on the exact route
          blk.q8_abandoned->store(true, std::memory_order_relaxed);
          return;
        }
        return AttendExactCopies(task, blk, kv, scale, dt);
      }
    }
    // The rows the in-loop prefetches run ahead of (a task's first `ahead`), all asked for at
    // once: one key's work is more instructions than the core looks ahead, so each of their misses
    // would otherwise be waited for alone.
    if (first && rows.in_pool) {
      for (int64_t i = 0; i < std::min(rows.n, ahead); ++i) {
        prefetch_l2(rows.k[i], static_cast<size_t>(dk * sizeof(E)));
        if (!cross) prefetch_l2(rows.v[i], static_cast<size_t>(kv.dv * sizeof(E)));
      }
    }
    const bool first_tile = first;
    first = false;
    for (int64_t r0 = 0; r0 < blk.rows; r0 += kRowGroup) {
      const int64_t r1 = std::min<int64_t>(blk.rows, r0 + kRowGroup);
      const std::pair<int64_t, int64_t> range = seen(r0, r1, t0, t1);
      const int64_t a = range.first, b = range.second;
      if (a >= b) continue;
      // Decode streams K and V: while the first row group uses key j, it asks for rows a distance
      // on (RowPrefetch), so the requests spread over the tile instead of arriving in one burst.
      RowPrefetch<E> prefetch{rows, static_cast<int64_t>(dk * sizeof(E)), static_cast<int64_t>(kv.dv * sizeof(E))};
      if (r0 == 0 && rows.in_pool) {
        const int64_t off = a - ua;  // the entry of the step's first key
        if (!paged) {
          prefetch.k_scoring = prefetch.v_values = off + ahead;
        } else {
          prefetch.k_values = off + rows.n;  // every paged pool: the next tile's key rows during p·V
          if (!cross) {
            prefetch.k_scoring = prefetch.v_scoring = off + ahead;
          } else {
            prefetch.v_scoring = off;
            if (first_tile) prefetch.k_scoring = off + ahead;  // no tile before asked for these
          }
        }
      }
      StepGroup(task, blk, r0, r1, a, b, rows, a - ua, dk, kv.dv, scale, prefetch);
    }
    if constexpr (std::is_same_v<E, F8E4M3>) {
      // A NaN code (rare: a pool written from NaNs) sends the whole task through exact F32 copies,
      // so that this kernel's lanes need no NaN test.
      // Checked after the tile's steps, when its rows are in cache: a scan before them stalled on
      // memory the prefetches had not asked for yet (F8 decode 15% slower).
      if (TileHasF8NaN(rows, dk, kv.dv)) [[unlikely]] return AttendExactCopies(task, blk, kv, scale, dt);
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
