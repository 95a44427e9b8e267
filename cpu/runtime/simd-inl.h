// Per-target SIMD helpers for the cpu kernels (Highway's re-includable -inl.h pattern): loads and
// stores that convert F16 / BF16 to and from F32 lanes, and F32 row primitives built on them.
#if defined(TS_CPU_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_SIMD_INL_H_
#undef TS_CPU_SIMD_INL_H_
#else
#define TS_CPU_SIMD_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Scalar conversions, rounding to nearest even exactly as core/dtype.h does.
inline float to_f(float v) { return v; }
inline float to_f(hwy::float16_t v) { return f16_to_f32(v.bits); }
inline float to_f(hwy::bfloat16_t v) { return bf16_to_f32(v.bits); }
template <class T> inline T from_f(float v);
template <> inline float from_f<float>(float v) { return v; }
template <> inline hwy::float16_t from_f<hwy::float16_t>(float v) { hwy::float16_t h; h.bits = f32_to_f16(v); return h; }
template <> inline hwy::bfloat16_t from_f<hwy::bfloat16_t>(float v) { hwy::bfloat16_t h; h.bits = f32_to_bf16(v); return h; }

// A full vector of F32 lanes from p (unaligned).
HWY_INLINE VF LoadF(DF d, const float* p) { return hn::LoadU(d, p); }
HWY_INLINE VF LoadF(DF d, const hwy::float16_t* p) { return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, DF>(), p)); }
HWY_INLINE VF LoadF(DF d, const hwy::bfloat16_t* p) { return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::bfloat16_t, DF>(), p)); }

HWY_INLINE void StoreF(DF d, VF v, float* p) { hn::StoreU(v, d, p); }
HWY_INLINE void StoreF(DF d, VF v, hwy::float16_t* p) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  (void)d;
  const hn::Rebind<hwy::float16_t, DF> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, p);  // vcvtps2ph: round to nearest even
#else
  // Highway's emulated F16 demotion truncates: round lane by lane instead.
  HWY_ALIGN float lanes[hn::MaxLanes(DF())];
  hn::Store(v, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) p[i] = from_f<hwy::float16_t>(lanes[i]);
#endif
}
HWY_INLINE void StoreF(DF /*d*/, VF v, hwy::bfloat16_t* p) {
  // Highway's BF16 demotion truncates; round to nearest even on the bits (NaN kept quiet).
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto u = hn::BitCast(du, v);
  const auto rounded = hn::Add(u, hn::Add(hn::Set(du, 0x7fffu), hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u))));
  const auto nan_bits = hn::Or(hn::ShiftRight<16>(u), hn::Set(du, 0x40u));
  const auto hi = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan_bits, hn::ShiftRight<16>(rounded));
  const hn::Rebind<uint16_t, DF> d16;
  hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, hi)), d16, reinterpret_cast<uint16_t*>(p));
}

// dst[i] = float(src[i]) for i < n.
template <class T> HWY_INLINE void RowToF32(const T* HWY_RESTRICT src, float* HWY_RESTRICT dst, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(LoadF(d, src + i), d, dst + i);
  for (; i < n; ++i) dst[i] = to_f(src[i]);
}

// dst[i] = T(src[i]) for i < n, rounding to nearest even.
template <class T> HWY_INLINE void RowFromF32(const float* HWY_RESTRICT src, T* HWY_RESTRICT dst, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) StoreF(d, hn::LoadU(d, src + i), dst + i);
  for (; i < n; ++i) dst[i] = from_f<T>(src[i]);
}

// RowFromF32, but an F32 destination aligned to the vector is written with streaming stores, which
// skip the write-allocate read of lines about to be overwritten (a third more traffic on a
// memory-bound op). Weakly ordered: the caller fences before the outputs are used.
template <class T> HWY_INLINE void RowFromF32Streaming(const float* HWY_RESTRICT src, T* HWY_RESTRICT dst, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    if (reinterpret_cast<uintptr_t>(dst) % (N * sizeof(float)) == 0)
      for (; i + N <= n; i += N) hn::Stream(hn::LoadU(d, src + i), d, dst + i);
  }
  RowFromF32(src + i, dst + i, n - i);
}

// Copies n bytes, with streaming stores from dst's first vector-aligned byte on (memcpy for the bytes
// before and after): lines written whole skip the write-allocate read. Weakly ordered: the caller
// fences before the copy is read.
HWY_INLINE void StreamBytes(void* dst, const void* src, size_t n) {
  const hn::ScalableTag<uint8_t> d;
  const size_t V = hn::Lanes(d);
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  const size_t head = std::min(n, (V - reinterpret_cast<uintptr_t>(out) % V) % V);
  std::memcpy(out, in, head);
  size_t i = head;
  for (; i + V <= n; i += V) hn::Stream(hn::LoadU(d, in + i), d, out + i);
  std::memcpy(out + i, in + i, n - i);
}

// sum_i a[i] * b[i] with four independent accumulators (a fixed order: deterministic).
template <class T> HWY_INLINE float Dot(const float* HWY_RESTRICT a, const T* HWY_RESTRICT b, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  VF s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::MulAdd(hn::LoadU(d, a + i), LoadF(d, b + i), s0);
    s1 = hn::MulAdd(hn::LoadU(d, a + i + N), LoadF(d, b + i + N), s1);
    s2 = hn::MulAdd(hn::LoadU(d, a + i + 2 * N), LoadF(d, b + i + 2 * N), s2);
    s3 = hn::MulAdd(hn::LoadU(d, a + i + 3 * N), LoadF(d, b + i + 3 * N), s3);
  }
  for (; i + N <= n; i += N) s0 = hn::MulAdd(hn::LoadU(d, a + i), LoadF(d, b + i), s0);
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  for (; i < n; ++i) s += a[i] * to_f(b[i]);
  return s;
}

// sum_i x[i]^2 and sum_i x[i] over an F32 row.
HWY_INLINE float SumSquares(const float* HWY_RESTRICT x, int64_t n) { return Dot(x, x, n); }
HWY_INLINE float Sum(const float* HWY_RESTRICT x, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  VF s0 = hn::Zero(d), s1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    s0 = hn::Add(s0, hn::LoadU(d, x + i));
    s1 = hn::Add(s1, hn::LoadU(d, x + i + N));
  }
  for (; i + N <= n; i += N) s0 = hn::Add(s0, hn::LoadU(d, x + i));
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  for (; i < n; ++i) s += x[i];
  return s;
}

// y[i] += a * x[i].
HWY_INLINE void Axpy(float a, const float* HWY_RESTRICT x, float* HWY_RESTRICT y, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF va = hn::Set(d, a);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::MulAdd(va, hn::LoadU(d, x + i), hn::LoadU(d, y + i)), d, y + i);
  for (; i < n; ++i) y[i] += a * x[i];
}

// y[i] *= a.
HWY_INLINE void Scale(float a, float* HWY_RESTRICT y, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF va = hn::Set(d, a);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(va, hn::LoadU(d, y + i)), d, y + i);
  for (; i < n; ++i) y[i] *= a;
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_SIMD_INL_H_
