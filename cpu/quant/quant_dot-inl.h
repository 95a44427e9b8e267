// Per-target decode of the GGUF block kinds (Highway's re-includable -inl.h pattern): the one place
// the cpu backend reads a block, used by dequantize, the decode GEMV, the prefill panels and the
// MoE expert GEMVs (cpu/quant/quant_rows.cpp). Two readings of each kind: the exact F32 decode below
// (dequantize, prefill panels, and the GEMV of a few outputs), and further down the integer dot on
// int8 activations (the decode GEMV, which is bound by memory only when the weights stay integers).
//
// Every kind is seen the same way: a block is a list of sub-blocks, and a value of sub-block s is
// scale_s * (q - zero) with a signed offset (Q4_0, Q8_0, Q6_K: K::kBiased false) or scale_s * q +
// bias_s (Q4_1, Q4_K, Q5_K), q a small non-negative integer. Each kind's ForEachSub(block, f) calls
// f(pos, len, scale, zero, bias, quants) per sub-block, where quants(l) returns the integer lanes of
// values pos + l .. pos + l + N - 1 (N = Lanes(DQ), which divides every sub-block's length).
//   - A decode computes each value in ggml's form: the product is exact in F32 (an f16 scale times
//     small integers, at most 24 significant bits), and the one rounding of the add (or none) gives
//     ggml's bits, signs of zero included (hence (q - zero) * scale, not scale * q - zero * scale).
//   - A dot product keeps the offsets out of the inner loop: sum_l a_l (scale q_l + b) =
//     scale * sum_l a_l q_l + b * sum_l a_l (b = bias - scale * zero), the sums of a per 16 values computed once per
//     activation row and shared by every weight row. The inner loop is then a widen, a convert and an
//     FMA per N weights, with the nibble and bit unpacking done on the widened lanes.
#include "cpu/quant/quant_act.h"

#if defined(TS_CPU_QUANT_DOT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_QUANT_DOT_INL_H_
#undef TS_CPU_QUANT_DOT_INL_H_
#else
#define TS_CPU_QUANT_DOT_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/kinds.h"
#include "cpu/runtime/prefetch.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 F32 lanes, so that a sub-block (16 or 32 values) is a whole number of vectors.
using DQ = hn::CappedTag<float, 16>;
using VQ = hn::Vec<DQ>;
using DQI = hn::RebindToSigned<DQ>;
using VQI = hn::Vec<DQI>;

inline constexpr int64_t kSumSpan = 16;  // activation sums are kept per 16 values

// An f16 scale, widened by the target's own conversion (exact): an out-of-line call per block would
// cost as much as the block's arithmetic.
HWY_INLINE float LoadHalf(const uint8_t* p) {
  const hn::CappedTag<float, 1> d1;
  const hn::Rebind<hwy::float16_t, decltype(d1)> dh;
  return hn::GetLane(hn::PromoteTo(d1, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p))));
}

// N bytes from p, widened to int32 lanes (unsigned or signed bytes).
HWY_INLINE VQI LoadU8(const uint8_t* p) { return hn::PromoteTo(DQI(), hn::LoadU(hn::Rebind<uint8_t, DQ>(), p)); }
HWY_INLINE VQI LoadI8(const uint8_t* p) {
  return hn::PromoteTo(DQI(), hn::LoadU(hn::Rebind<int8_t, DQ>(), reinterpret_cast<const int8_t*>(p)));
}
HWY_INLINE VQI Low4(VQI v) { return hn::And(v, hn::Set(DQI(), 0xF)); }

// ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j (of 8) of a Q4_K / Q5_K block.
HWY_INLINE void ScaleMinK4(int j, const uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q4_0 {d f16, qs[16]}: d * q - 8 d; values 0-15 in the low nibbles, 16-31 in the high ones.
struct BlockQ4_0 {
  using Act = ActQ8;  // the activation layout of its integer dot
  static constexpr QuantKindRow kRow = kind_row(QuantKind::Q4_0);  // core/kinds.inc
  static constexpr int64_t kElems = kRow.block_elems, kBytes = kRow.block_bytes;
  static constexpr bool kBiased = false;
  // For the integer dot: where the codes start, the f16 min's offset (0: none), the zero code.
  static constexpr int kQs = kRow.qs, kMinAt = 0, kZero = 8;
  static constexpr bool kPaired = true;  // its integer dot reads ActQ8::qp
  template <class F> static HWY_INLINE void ForEachSub(const uint8_t* b, F&& f) {
    const float d = LoadHalf(b + kRow.d);
    const uint8_t* qs = b + kRow.qs;
    f(0, 16, d, 8, 0.0f, [qs](int l) { return Low4(LoadU8(qs + l)); });
    f(16, 16, d, 8, 0.0f, [qs](int l) { return hn::ShiftRight<4>(LoadU8(qs + l)); });
  }
};

// Q4_1 {d f16, m f16, qs[16]}: d * q + m, nibbles as Q4_0.
struct BlockQ4_1 {
  using Act = ActQ8;  // the activation layout of its integer dot
  static constexpr QuantKindRow kRow = kind_row(QuantKind::Q4_1);  // core/kinds.inc
  static constexpr int64_t kElems = kRow.block_elems, kBytes = kRow.block_bytes;
  static constexpr bool kBiased = true;
  static constexpr int kQs = kRow.qs, kMinAt = kRow.m, kZero = 0;
  static constexpr bool kPaired = true;
  template <class F> static HWY_INLINE void ForEachSub(const uint8_t* b, F&& f) {
    const float d = LoadHalf(b + kRow.d), m = LoadHalf(b + kRow.m);
    const uint8_t* qs = b + kRow.qs;
    f(0, 16, d, 0, m, [qs](int l) { return Low4(LoadU8(qs + l)); });
    f(16, 16, d, 0, m, [qs](int l) { return hn::ShiftRight<4>(LoadU8(qs + l)); });
  }
};

// Q8_0 {d f16, qs[32] int8}: d * q.
struct BlockQ8_0 {
  using Act = ActQ8;  // the activation layout of its integer dot
  static constexpr QuantKindRow kRow = kind_row(QuantKind::Q8_0);  // core/kinds.inc
  static constexpr int64_t kElems = kRow.block_elems, kBytes = kRow.block_bytes;
  static constexpr bool kBiased = false;
  static constexpr int kQs = kRow.qs, kMinAt = 0, kZero = 0;
  static constexpr bool kPaired = false;  // reads ActQ8::q
  template <class F> static HWY_INLINE void ForEachSub(const uint8_t* b, F&& f) {
    const uint8_t* qs = b + kRow.qs;
    f(0, 32, LoadHalf(b + kRow.d), 0, 0.0f, [qs](int l) { return LoadI8(qs + l); });
  }
};

// Q4_K {d f16, dmin f16, scales[12], qs[128]}: sub-block s is d sc_s * q - dmin m_s; each 32 bytes of
// qs hold sub-block 2c in the low nibbles and 2c + 1 in the high ones.
struct BlockQ4_K {
  using Act = ActQ8K;  // the activation layout of its integer dot
  static constexpr QuantKindRow kRow = kind_row(QuantKind::Q4_K);  // core/kinds.inc
  static constexpr int64_t kElems = kRow.block_elems, kBytes = kRow.block_bytes;
  static constexpr bool kBiased = true;
  template <class F> static HWY_INLINE void ForEachSub(const uint8_t* b, F&& f) {
    const float d = LoadHalf(b + kRow.d), dmin = LoadHalf(b + kRow.m);
    for (int c = 0; c < 4; ++c) {
      const uint8_t* qs = b + kRow.qs + 32 * c;
      int sc, m;
      ScaleMinK4(2 * c, b + kRow.scales, sc, m);
      f(64 * c, 32, d * static_cast<float>(sc), 0, -(dmin * static_cast<float>(m)), [qs](int l) { return Low4(LoadU8(qs + l)); });
      ScaleMinK4(2 * c + 1, b + kRow.scales, sc, m);
      f(64 * c + 32, 32, d * static_cast<float>(sc), 0, -(dmin * static_cast<float>(m)),
        [qs](int l) { return hn::ShiftRight<4>(LoadU8(qs + l)); });
    }
  }
};

// Q5_K {d f16, dmin f16, scales[12], qh[32], qs[128]}: as Q4_K with a fifth bit, bit s of qh[l] for
// value l of sub-block s.
struct BlockQ5_K {
  using Act = ActQ8K;  // the activation layout of its integer dot
  static constexpr QuantKindRow kRow = kind_row(QuantKind::Q5_K);  // core/kinds.inc
  static constexpr int64_t kElems = kRow.block_elems, kBytes = kRow.block_bytes;
  static constexpr bool kBiased = true;
  template <class F> static HWY_INLINE void ForEachSub(const uint8_t* b, F&& f) {
    const float d = LoadHalf(b + kRow.d), dmin = LoadHalf(b + kRow.m);
    const uint8_t* qh = b + kRow.qh;
    for (int c = 0; c < 4; ++c) {
      const uint8_t* qs = b + kRow.qs + 32 * c;
      const int lo_bit = 2 * c, hi_bit = 2 * c + 1;
      int sc, m;
      ScaleMinK4(2 * c, b + kRow.scales, sc, m);
      f(64 * c, 32, d * static_cast<float>(sc), 0, -(dmin * static_cast<float>(m)), [qs, qh, lo_bit](int l) {
        const VQI h = hn::And(hn::ShiftRightSame(LoadU8(qh + l), lo_bit), hn::Set(DQI(), 1));
        return hn::Or(Low4(LoadU8(qs + l)), hn::ShiftLeft<4>(h));
      });
      ScaleMinK4(2 * c + 1, b + kRow.scales, sc, m);
      f(64 * c + 32, 32, d * static_cast<float>(sc), 0, -(dmin * static_cast<float>(m)), [qs, qh, hi_bit](int l) {
        const VQI h = hn::And(hn::ShiftRightSame(LoadU8(qh + l), hi_bit), hn::Set(DQI(), 1));
        return hn::Or(hn::ShiftRight<4>(LoadU8(qs + l)), hn::ShiftLeft<4>(h));
      });
    }
  }
};

// Q6_K {ql[128], qh[64], scales[16] int8, d f16}: sub-blocks of 16, d sc_s * q - 32 d sc_s, q 6 bits.
// Per half of 128 values, value l + 32 j (j = 0..3, l < 32) takes its low 4 bits from ql[l + 32 (j & 1)]
// (low nibble for j < 2, high for j >= 2) and its top 2 bits from bits 2j, 2j + 1 of qh[l].
struct BlockQ6_K {
  using Act = ActQ8K;  // the activation layout of its integer dot
  static constexpr QuantKindRow kRow = kind_row(QuantKind::Q6_K);  // core/kinds.inc
  static constexpr int64_t kElems = kRow.block_elems, kBytes = kRow.block_bytes;
  static constexpr bool kBiased = false;
  template <class F> static HWY_INLINE void ForEachSub(const uint8_t* b, F&& f) {
    const float d = LoadHalf(b + kRow.d);
    const int8_t* scales = reinterpret_cast<const int8_t*>(b + kRow.scales);
    for (int half = 0; half < 2; ++half)
      for (int j = 0; j < 4; ++j)
        for (int s = 0; s < 2; ++s) {
          const uint8_t* ql = b + kRow.qs + 64 * half + 32 * (j & 1) + 16 * s;
          const uint8_t* qh = b + kRow.qh + 32 * half + 16 * s;
          const float scale = d * static_cast<float>(scales[8 * half + 2 * j + s]);
          const int shift = 2 * j;
          const bool high_nibble = j >= 2;
          f(128 * half + 32 * j + 16 * s, 16, scale, 32, 0.0f, [ql, qh, shift, high_nibble](int l) {
            const VQI lo = LoadU8(ql + l);
            const VQI top = hn::And(hn::ShiftRightSame(LoadU8(qh + l), shift), hn::Set(DQI(), 3));
            return hn::Or(high_nibble ? hn::ShiftRight<4>(lo) : Low4(lo), hn::ShiftLeft<4>(top));
          });
        }
  }
};

// f(K{}) for the block struct K of a GGUF kind (the per-kind kernels are templates on K).
template <class F> HWY_INLINE void VisitKind(QuantKind kind, F&& f) {
  switch (kind) {
    case QuantKind::Q4_0: return f(BlockQ4_0{});
    case QuantKind::Q4_1: return f(BlockQ4_1{});
    case QuantKind::Q8_0: return f(BlockQ8_0{});
    case QuantKind::Q4_K: return f(BlockQ4_K{});
    case QuantKind::Q5_K: return f(BlockQ5_K{});
    case QuantKind::Q6_K: return f(BlockQ6_K{});
    default: HWY_ASSERT(false);  // the kernels' support functions admit the block kinds only
  }
}

// Decodes one block of kind K into out[0, K::kElems), with ggml's bits.
template <class K> HWY_INLINE void DecodeBlock(const uint8_t* HWY_RESTRICT b, float* HWY_RESTRICT out) {
  const DQ d;
  const int N = static_cast<int>(hn::Lanes(d));
  K::ForEachSub(b, [&](int pos, int len, float scale, int zero, float bias, auto quants) {
    const VQ vs = hn::Set(d, scale), vb = hn::Set(d, bias);
    const VQI vz = hn::Set(DQI(), zero);
    for (int l = 0; l < len; l += N) {
      const VQ v = K::kBiased ? hn::MulAdd(vs, hn::ConvertTo(d, quants(l)), vb)
                              : hn::Mul(hn::ConvertTo(d, hn::Sub(quants(l), vz)), vs);
      hn::StoreU(v, d, out + pos + l);
    }
  });
}

// sums[i] = a[16 i] + ... + a[16 i + 15] for i < n / 16 (n a multiple of 16).
HWY_INLINE void SumsPer16(const float* HWY_RESTRICT a, int64_t n, float* HWY_RESTRICT sums) {
  const DQ d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < n / kSumSpan; ++i) {
    VQ s = hn::Zero(d);
    for (int64_t l = 0; l < kSumSpan; l += N) s = hn::Add(s, hn::LoadU(d, a + kSumSpan * i + l));
    sums[i] = hn::GetLane(hn::SumOfLanes(d, s));
  }
}

// out[i * ldo] = sum_c a_i[c] * w[c] for one weight row w of `blocks` blocks of kind K and M
// activation rows a_i = a + i * lda, whose per-16 sums are sums + i * lds.
template <class K, int M>
HWY_INLINE void DotRow(const uint8_t* HWY_RESTRICT w, int64_t blocks, const float* HWY_RESTRICT a, int64_t lda,
                       const float* HWY_RESTRICT sums, int64_t lds, float* out, int64_t ldo) {
  const DQ d;
  const int N = static_cast<int>(hn::Lanes(d));
  VQ acc[M];
  float bias_total[M];
  for (int i = 0; i < M; ++i) {
    acc[i] = hn::Zero(d);
    bias_total[i] = 0;
  }
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float* ab = a + blk * K::kElems;
    const float* sb = sums + blk * (K::kElems / kSumSpan);
    K::ForEachSub(w + blk * K::kBytes, [&](int pos, int len, float scale, int zero, float bias_in, auto quants) {
      const float bias = bias_in - scale * static_cast<float>(zero);
      VQ s[M];
      for (int i = 0; i < M; ++i) s[i] = hn::Zero(d);
      for (int l = 0; l < len; l += N) {
        const VQ q = hn::ConvertTo(d, quants(l));
        for (int i = 0; i < M; ++i) s[i] = hn::MulAdd(q, hn::LoadU(d, ab + i * lda + pos + l), s[i]);
      }
      const VQ vs = hn::Set(d, scale);
      for (int i = 0; i < M; ++i) {
        acc[i] = hn::MulAdd(s[i], vs, acc[i]);
        float asum = 0;
        for (int j = 0; j < len / kSumSpan; ++j) asum += sb[i * lds + pos / kSumSpan + j];
        bias_total[i] += bias * asum;
      }
    });
  }
  for (int i = 0; i < M; ++i) out[i * ldo] = hn::GetLane(hn::SumOfLanes(d, acc[i])) + bias_total[i];
}


// ---- The decode GEMV's integer dot: weight codes times activations quantized to int8 ----
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

// Makes the compiler read v back from memory after this point: broadcasts of its elements are then
// loads, which x86 does without a vector ALU op, where the compiler, knowing the values in a
// register, would build each with one or two shuffles.
template <class T> HWY_INLINE void KeepInMemory(T& v) { asm("" : "+m"(v)); }

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
    const VF d = F16Lanes(dh, 0);
    AddOffsets<K, M>(d, mh, 0, blk0, a, odd);
    hn::Vec<DI32> sums[M];
    PairedSums8<K, M>(b, blk0, a, sums);
    for (int i = 0; i < M; ++i)
      acc[i] = hn::MulAdd(hn::ConvertTo(DF(), sums[i]), hn::Mul(d, hn::LoadU(DF(), a[i].d + blk0)), acc[i]);
    return;
  }
#endif
  float scale[M][8];
  for (int j = 0; j < 8; j += kNF) {
    const VF d = F16Lanes(dh, j);
    for (int i = 0; i < M; ++i) hn::StoreU(hn::Mul(d, hn::LoadU(DF(), a[i].d + blk0 + j)), DF(), scale[i] + j);
    AddOffsets<K, M>(d, mh, j, blk0, a, odd);
  }
  KeepInMemory(scale);
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
  __m256i sc2, mn2;
  LoadK4Scales<kBlocks>(b, stride, sc2, mn2);
  // d, dmin of block 0, then of block 1 (0 for one block).
  uint32_t h0, h1 = 0;
  hwy::CopyBytes<4>(b, &h0);
  if (kBlocks == 2) hwy::CopyBytes<4>(b + stride, &h1);
  const __m128 dh = _mm_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128(static_cast<int>(h0)), static_cast<int>(h1), 1));
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
    const __m256i sc = j == 0 ? _mm256_permute2x128_si256(sc2, sc2, 0x00) : _mm256_permute2x128_si256(sc2, sc2, 0x11);
    for (int i = 0; i < M; ++i) {
      __m256i isum;
      if constexpr (16 * kMaxCode * 127 < 32768)
        isum = _mm256_madd_epi16(_mm256_hadd_epi16(pairs[i][0], pairs[i][1]), sc);
      else
        isum = _mm256_add_epi32(_mm256_madd_epi16(pairs[i][0], _mm256_unpacklo_epi16(sc, sc)),
                                _mm256_madd_epi16(pairs[i][1], _mm256_unpackhi_epi16(sc, sc)));
      // f = (d0 da0, dmin0 da0, d1 da1, dmin1 da1): lane 2j is this block's d * da.
      const __m128 da = kBlocks == 2 ? _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(a[i].d + blk)))
                                     : _mm_load_ss(a[i].d + blk);
      const __m256 f = _mm256_castps128_ps256(_mm_mul_ps(dh, _mm_unpacklo_ps(da, da)));
      VF& to = j == 0 ? acc[i] : acc_odd[i];
      to.raw = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_permutevar8x32_ps(f, _mm256_set1_epi32(2 * j)), to.raw);
      if (j == 0) {  // both blocks' mins: block j's in half j, times its dmin * da
        const __m256i bs = kBlocks == 2 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[i].bs32 + 8 * blk))
                                        : _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a[i].bs32 + 8 * blk)));
        const __m256 dmin_da = _mm256_permutevar8x32_ps(f, _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3));
        to.raw = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(mn2, bs)), dmin_da, to.raw);
      }
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
template <int M> HWY_INLINE void DotQ8Block(BlockQ6_K, const uint8_t* b, int64_t blk, const ActQ8K* a, VF* acc) {
  const float d = LoadHalf(b + BlockQ6_K::kRow.d);
  const int8_t* scales = reinterpret_cast<const int8_t*>(b + BlockQ6_K::kRow.scales);
  hn::Vec<DI32> isum[M];
  for (int i = 0; i < M; ++i) isum[i] = hn::Neg(hn::ShiftLeft<5>(Q6ScaledSums(scales, a[i].bs16 + 16 * blk)));
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

// The weights ahead of the ones about to be read (`bytes` of them, from `at` + kPrefetchAhead), into
// L2: one stream per thread is not enough for the hardware prefetchers to keep the memory bus busy.
// (Past a row's end this reads the next row, or past the matrix: prefetches never fault.)
// Measured on a Zen 3 (2026-11-24, quiet, m1_n4096_k14336, L1 prefetches): without any, Q4_K and Q8_0
// read ~25% slower; 1024, 4096 or 8192 bytes ahead were within the noise of 2048. Reading 2 weight
// rows per pass (more streams, as the F32 GEMV's 4) made Q4_0 / Q4_1 ~30% slower and Q4_K ~20% (more
// live registers, spills), Q8_0 no faster; one contiguous half per thread instead of 64 tasks, no
// faster. On a Zen 4 (2026-11-24, cold, 5 alternating rounds, min / median us), L2 prefetches 8 KiB
// ahead against L1 prefetches 2 KiB ahead: Q4_K 1120 / 1155 -> 782 / 904, Q8_0 1979 / 2093 -> 1537 /
// 1759, Q4_0 1106 / 1270 -> 864 / 1019; 4, 16 and 32 KiB ahead (L2) and 8 KiB (L1) were slower.
inline constexpr int64_t kPrefetchAhead = 8192;
HWY_INLINE void PrefetchAhead(const uint8_t* at, int64_t bytes) { prefetch_l2(at + kPrefetchAhead, static_cast<size_t>(bytes)); }

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
  for (int i = 0; i < M; ++i) out[i * ldo] = hn::GetLane(hn::SumOfLanes(DF(), hn::Add(acc[i], acc_odd[i])));
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_QUANT_DOT_INL_H_
