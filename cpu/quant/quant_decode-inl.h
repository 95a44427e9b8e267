// Per-target decode of the GGUF block kinds (Highway's re-includable -inl.h pattern): the one place
// the cpu backend reads a block, used by dequantize, the decode GEMV, the prefill panels and the
// MoE expert GEMVs (cpu/quant/quant_rows.cpp). Two readings of each kind: the exact F32 decode here
// (dequantize, prefill panels, and the GEMV of a few outputs), and the integer dot on int8 activations
// (cpu/quant/quant_int8_dot-inl.h: the decode GEMV, which is bound by memory only when the weights stay
// integers).
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

#if defined(TS_CPU_QUANT_DECODE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_QUANT_DECODE_INL_H_
#undef TS_CPU_QUANT_DECODE_INL_H_
#else
#define TS_CPU_QUANT_DECODE_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "core/dtype.h"
#include "core/kinds.h"
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

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_QUANT_DECODE_INL_H_
