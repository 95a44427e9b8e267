// kv_append_paged on cpu: each (token, kv head) row of k_in / v_in quantized (I8, F8_E4M3) or
// converted (F16, BF16) into its pool slot, rows split across threads. The quantization is defined to
// the bit (docs/catalog.md): max|x| in lanes (exact), scale = max / qmax in F32, codes x / scale by IEEE
// division in lanes; I8 rounds half away from zero (trunc, then the fraction decides, never x + 0.5,
// which rounds 0.49999997 up), F8 to nearest even through core/dtype.h's encoder.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/attention/kv_append.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/dtype.h"
#include "core/ops/kv/kv_quant.h"
#include "cpu/attention/kv_quantize.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/prefetch.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// max|x|, or Inf for a row that holds a NaN or an Inf. Four running maxima, so that the loop is not
// one chain of dependent Max, and the row's finiteness from sum(x * 0), which is NaN exactly when
// some x is not finite: whatever Max does with a NaN operand (it differs between targets) never
// decides it, for one FMA a vector rather than a test and a select.
HWY_INLINE float AbsMax(const float* HWY_RESTRICT x, int64_t n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // On AVX-512, two instructions a vector instead of three: the magnitudes' bits compare as unsigned
  // integers in the order of the magnitudes, and every Inf and NaN lies above every finite float.
  {
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff);
    __m512i m0 = _mm512_setzero_si512(), m1 = m0, m2 = m0, m3 = m0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
      m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(x + i), magnitude));
      m1 = _mm512_max_epu32(m1, _mm512_and_si512(_mm512_loadu_si512(x + i + 16), magnitude));
      m2 = _mm512_max_epu32(m2, _mm512_and_si512(_mm512_loadu_si512(x + i + 32), magnitude));
      m3 = _mm512_max_epu32(m3, _mm512_and_si512(_mm512_loadu_si512(x + i + 48), magnitude));
    }
    for (; i + 16 <= n; i += 16) m0 = _mm512_max_epu32(m0, _mm512_and_si512(_mm512_loadu_si512(x + i), magnitude));
    uint32_t bits = _mm512_reduce_max_epu32(_mm512_max_epu32(_mm512_max_epu32(m0, m1), _mm512_max_epu32(m2, m3)));
    for (; i < n; ++i) bits = std::max(bits, std::bit_cast<uint32_t>(x[i]) & 0x7fffffffu);
    return bits >= 0x7f800000u ? std::numeric_limits<float>::infinity() : std::bit_cast<float>(bits);
  }
#endif
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF zero = hn::Zero(d);
  VF m0 = zero, m1 = zero, m2 = zero, m3 = zero, z0 = zero, z1 = zero;
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    const VF a = hn::LoadU(d, x + i), b = hn::LoadU(d, x + i + N);
    const VF c = hn::LoadU(d, x + i + 2 * N), e = hn::LoadU(d, x + i + 3 * N);
    m0 = hn::Max(m0, hn::Abs(a)), m1 = hn::Max(m1, hn::Abs(b)), m2 = hn::Max(m2, hn::Abs(c)), m3 = hn::Max(m3, hn::Abs(e));
    z0 = hn::MulAdd(a, zero, hn::MulAdd(b, zero, z0)), z1 = hn::MulAdd(c, zero, hn::MulAdd(e, zero, z1));
  }
  for (; i + N <= n; i += N) {
    const VF a = hn::LoadU(d, x + i);
    m0 = hn::Max(m0, hn::Abs(a)), z0 = hn::MulAdd(a, zero, z0);
  }
  if (!hn::AllFalse(d, hn::IsNaN(hn::Add(z0, z1)))) return std::numeric_limits<float>::infinity();
  float r = hn::GetLane(hn::MaxOfLanes(d, hn::Max(hn::Max(m0, m1), hn::Max(m2, m3))));
  for (; i < n; ++i) {
    if (!std::isfinite(x[i])) return std::numeric_limits<float>::infinity();
    r = std::max(r, std::fabs(x[i]));
  }
  return r;
}

// The codes are defined from the IEEE quotient q = x / scale, but a vector division costs ten times a
// multiplication (an I8 append was bound by it). Both quantizers encode q' = x * (1 / scale) instead,
// which differs from q by less than 4 units in its last place (two roundings, each within half a
// unit of relative precision), and note whether some q' lies so near a rounding boundary that q
// could fall on its other side; if one does (rare), the row is encoded again from the quotients.
// Where 1 / scale is not finite (a subnormal scale), the row is encoded from the quotients at once.
HWY_INLINE bool ReciprocalServes(float scale) { return std::isfinite(1.0f / scale); }

// The low bytes of 32-bit lanes (codes that fit a byte): one vpmovdb on AVX-512, which Highway 1.0's
// TruncateTo does in a shuffle and a permute.
template <class D8, class V32> HWY_INLINE hn::Vec<D8> LowBytes(D8 d8, V32 v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D8()) == 16 && sizeof(hn::TFromV<V32>) == 4) {
    return hn::BitCast(d8, hn::Vec128<uint8_t>{_mm512_cvtepi32_epi8(v.raw)});
  }
#endif
  const hn::Rebind<uint32_t, D8> du;
  return hn::BitCast(d8, hn::TruncateTo(hn::Rebind<uint8_t, D8>(), hn::BitCast(du, v)));
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Four vectors of byte codes in 32-bit lanes (signed: I8; unsigned: F8 codes 0 .. 0xff) stored as the
// 64 bytes of c0, then c1, c2, c3: two saturating packs, a dword permute and one store, where four
// vpmovdb and four stores take twice the micro-ops. The packs keep each 128-bit block's dwords in
// place, so block b of the packed bytes holds lanes 4b .. 4b + 3 of c0, c1, c2, c3 in turn: dword k
// of the 64 bytes is packed dword 4 (k % 4) + k / 4.
template <bool kSigned>
HWY_INLINE void StoreBytes4(__m512i c0, __m512i c1, __m512i c2, __m512i c3, void* dst) {
  const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  const __m512i packed = kSigned ? _mm512_packs_epi16(_mm512_packs_epi32(c0, c1), _mm512_packs_epi32(c2, c3))
                                 : _mm512_packus_epi16(_mm512_packus_epi32(c0, c1), _mm512_packus_epi32(c2, c3));
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi32(order, packed));
}
#endif

// codes[i] = round_half_away(x[i] / scale) clamped to [-127, 127]; scale > 0. From q' (above): a
// q' more than 2^-14 away from a tie rounds as q does, by either rule (|q| < 128 differs from q' by
// less than 2^-15; a larger |q| clamps to +-127 on both sides), so nearest-even Round serves.
HWY_INLINE void QuantizeI8Row(const float* HWY_RESTRICT x, int64_t n, float scale, int8_t* HWY_RESTRICT codes) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<int8_t, decltype(di)> d8;
  const int64_t N = hn::Lanes(d);
  const VF lim = hn::Set(d, 127.0f);
  auto store = [&](int64_t i, VF r) HWY_ATTR { hn::StoreU(LowBytes(d8, hn::ConvertTo(di, hn::Clamp(r, hn::Neg(lim), lim))), d8, codes + i); };
  int64_t i = 0;
  bool exact = !ReciprocalServes(scale);  // encode from the quotients
  if (!exact) {
    const VF vr = hn::Set(d, 1.0f / scale), near_tie = hn::Set(d, 0.5f - 0x1p-14f);
    auto near = hn::FirstN(d, 0);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    // The same steps in AVX-512's own instructions, 11 micro-ops a vector where Highway 1.0 takes 17:
    // the rounding conversion straight to int32 (its fix-up for out-of-range lanes is not needed once
    // q' is clamped), the tie test from vreduceps (q' - round(q')), the codes by StoreBytes4.
    {
      const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
      __mmask16 near_mask = 0;
      auto codes16 = [&](const float* xi) HWY_ATTR {
        const __m512 q = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(xi), vr.raw), lo), hi);
        const __m512 frac = _mm512_reduce_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        near_mask |= _mm512_cmp_ps_mask(_mm512_abs_ps(frac), near_tie.raw, _CMP_GT_OQ);
        return _mm512_cvt_roundps_epi32(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      };
      for (; i + 64 <= n; i += 64)
        StoreBytes4<true>(codes16(x + i), codes16(x + i + 16), codes16(x + i + 32), codes16(x + i + 48), codes + i);
      for (; i + 16 <= n; i += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), _mm512_cvtepi32_epi8(codes16(x + i)));
      near = hn::Or(near, hn::Mask<DF>{near_mask});
    }
#endif
    for (; i + N <= n; i += N) {
      const VF q = hn::Mul(hn::LoadU(d, x + i), vr);
      const VF r = hn::Round(q);
      near = hn::Or(near, hn::Gt(hn::Abs(hn::Sub(q, r)), near_tie));
      store(i, r);
    }
    exact = !hn::AllFalse(d, near);
  }
  if (exact) {
    const VF vs = hn::Set(d, scale), half = hn::Set(d, 0.5f);
    for (i = 0; i + N <= n; i += N) {
      const VF q = hn::Div(hn::LoadU(d, x + i), vs);
      const VF t = hn::Trunc(q);
      const VF away = hn::CopySign(hn::Set(d, 1.0f), q);
      store(i, hn::IfThenElse(hn::Ge(hn::Abs(hn::Sub(q, t)), half), hn::Add(t, away), t));
    }
  }
  for (; i < n; ++i) codes[i] = static_cast<int8_t>(std::clamp(std::round(x[i] / scale), -127.0f, 127.0f));
}

// x / scale in lanes, each quotient encoded as e4m3fn (nearest even, saturating at 448), the codes
// core/dtype.h's f32_to_f8e4m3 gives, from the quotient's bits rather than through frexp (18x slower:
// kv_append_paged prefill512 F8 took 6.2 ms against I8's 0.35 ms). |q| >= 2^-6 (normal codes): round
// the F32 mantissa to 3 bits, nearest even (add 0x7ffff and the kept LSB below bit 20; a carry moves
// into the exponent), then rebias the exponent from 127 to 7 (120 << 3 in code units). |q| < 2^-6
// (subnormal codes, units of 2^-9): |q| * 2^9, exact, rounded to the nearest even integer; 8 is the
// smallest normal code, as it should be. A NaN quotient takes the scalar encoder. From q' (above):
// the rounding boundaries are the mantissas whose 20 dropped bits are 0x80000 (normal) and the
// half-integers of |q| * 2^9 (subnormal); a q' within 16 units of the first or 2^-12 of the second
// (q is within 4 units) sends the row to the quotients. The clamp at 448 and the normal / subnormal
// split add no boundary: 448 and 2^-6 are codes, so a q and q' on either side of one encode alike.
HWY_INLINE void QuantizeF8Row(const float* HWY_RESTRICT x, int64_t n, float scale, uint8_t* HWY_RESTRICT codes) {
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const int64_t N = hn::Lanes(d);
  const VF vmax = hn::Set(d, 448.0f), min_normal = hn::Set(d, 0x1p-6f);
  const VF subnormal_units = hn::Set(d, 512.0f);  // 2^9
  const VF near_half = hn::Set(d, 0.5f - 0x1p-12f);
  const auto one = hn::Set(du, 1u), round_bias = hn::Set(du, 0x7ffffu), rebias = hn::Set(du, 120u << 3);
  const auto dropped = hn::Set(du, 0xfffffu), tie_low = hn::Set(du, 0x80000u - 16u), tie_span = hn::Set(du, 33u);
  const auto sign_bit = hn::Set(du, 0x80000000u);
  auto nan = hn::FirstN(d, 0), near = nan;
  // Encodes the quotients q of lanes [i, i + N); with `check`, notes the lanes near a boundary.
  auto encode = [&](int64_t i, VF q, bool check) HWY_ATTR {
    nan = hn::Or(nan, hn::IsNaN(q));
    const VF a = hn::Min(hn::Abs(q), vmax);  // saturate: everything past 448 is code 0x7e
    const VF units = hn::Mul(a, subnormal_units);
    const VF whole = hn::Round(units);
    const auto bits = hn::BitCast(du, a);
    const auto subnormal = hn::Lt(a, min_normal);
    if (check) {
      // (dropped bits - (0x80000 - 16)) <= 32, unsigned: within 16 units of a normal code's tie.
      const auto near_normal_tie = hn::RebindMask(d, hn::Lt(hn::Sub(hn::And(bits, dropped), tie_low), tie_span));
      const auto near_subnormal_tie = hn::And(subnormal, hn::Gt(hn::Abs(hn::Sub(units, whole)), near_half));
      near = hn::Or(near, hn::Or(near_normal_tie, near_subnormal_tie));
    }
    const auto kept_lsb = hn::And(hn::ShiftRight<20>(bits), one);
    const auto normal = hn::Sub(hn::ShiftRight<20>(hn::Add(bits, hn::Add(round_bias, kept_lsb))), rebias);
    const auto sub = hn::BitCast(du, hn::ConvertTo(di, whole));
    const auto mag = hn::IfThenElse(hn::RebindMask(du, subnormal), sub, normal);
    const auto sign = hn::ShiftRight<24>(hn::And(hn::BitCast(du, q), sign_bit));
    hn::StoreU(LowBytes(d8, hn::Or(mag, sign)), d8, codes + i);  // codes 0 .. 0xff in 32-bit lanes
  };
  const bool reciprocal = ReciprocalServes(scale);
  int64_t i = 0;
  if (reciprocal) {
    const VF vr = hn::Set(d, 1.0f / scale);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    // In AVX-512's own instructions, 14 a vector where a first AVX-512 form of the steps above took 25
    // (an F8 append was bound by them), by three shortcuts that only the lanes near a boundary, which
    // go to the quotients anyway, could tell apart from those steps:
    // - Ties round up, not to even: a lane away from every tie rounds the same either way. So the
    //   bias, the rebias and the rounding are one add, t = bits + 0x80000 - (120 << 23), and the code
    //   is t >> 20. A normal tie is t's low 20 bits at 0, and "within 16 units" is the 15 bits above
    //   the lowest 5 of t + 16 at zero (one add, one test).
    // - A subnormal |q| (< 2^-6) becomes a normal one: s = |q| + 2^-6 lies in [2^-6, 2^-5], where
    //   s's code is 8 + |q|'s subnormal code (units of 2^-9 on both sides), so the same add, shift and
    //   tie test serve it, and 8 comes off its code. The add rounds to units of 2^-29, half a unit at
    //   most, and q' lies within 4 of q's own units (2^-30 or less) of q: a sum more than 15 units
    //   from a tie comes from a q on the same side of it.
    // - NaN quotients are noted as near a boundary: the row is encoded again from the quotients,
    //   whose loop handles NaN.
    // Four vectors' codes are stored at once (StoreBytes4).
    {
      const __m512i rebias = _mm512_set1_epi32(static_cast<int32_t>(0x80000u - (120u << 23)));
      const __m512i sixteen = _mm512_set1_epi32(16), tie_window = _mm512_set1_epi32(0xfffe0);
      const __m512i subnormal_code = _mm512_set1_epi32(8), code_sign = _mm512_set1_epi32(0x80);
      __mmask16 near_mask = 0;
      auto codes16 = [&](const float* xi) HWY_ATTR {
        const __m512 q = _mm512_mul_ps(_mm512_loadu_ps(xi), vr.raw);
        const __m512 a = _mm512_min_ps(_mm512_abs_ps(q), vmax.raw);
        const __mmask16 subnormal = _mm512_cmp_ps_mask(a, min_normal.raw, _CMP_LT_OQ);
        const __m512i bits = _mm512_castps_si512(_mm512_mask_add_ps(a, subnormal, a, min_normal.raw));
        const __m512i t = _mm512_add_epi32(bits, rebias);
        near_mask |= _mm512_testn_epi32_mask(_mm512_add_epi32(t, sixteen), tie_window) |
                     _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q);
        const __m512i code = _mm512_srli_epi32(t, 20);
        const __m512i mag = _mm512_mask_sub_epi32(code, subnormal, code, subnormal_code);
        // mag | (q's bits >> 24 & 0x80): A | (B & C) is ternary-logic table 0xF8.
        return _mm512_ternarylogic_epi32(mag, _mm512_srli_epi32(_mm512_castps_si512(q), 24), code_sign, 0xF8);
      };
      for (; i + 64 <= n; i += 64)
        StoreBytes4<false>(codes16(x + i), codes16(x + i + 16), codes16(x + i + 32), codes16(x + i + 48), codes + i);
      for (; i + 16 <= n; i += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), _mm512_cvtepi32_epi8(codes16(x + i)));
      near = hn::Or(near, hn::Mask<DF>{near_mask});
    }
#endif
    for (; i + N <= n; i += N) encode(i, hn::Mul(hn::LoadU(d, x + i), vr), true);
  }
  if (!reciprocal || !hn::AllFalse(d, near)) {
    const VF vs = hn::Set(d, scale);
    for (i = 0; i + N <= n; i += N) encode(i, hn::Div(hn::LoadU(d, x + i), vs), false);
  }
  for (; i < n; ++i) codes[i] = f32_to_f8e4m3(x[i] / scale);
  // The quotients of NaN inputs were encoded as nonsense above: the scalar encoder redoes them, after
  // the loops, which so make no call that would spill their constants.
  if (!hn::AllFalse(d, nan))
    for (int64_t l = 0; l < i; ++l)
      if (std::isnan(x[l])) codes[l] = f32_to_f8e4m3(x[l] / scale);
}

// One row into its slot; returns the scale (0 for F16 / BF16 and for a zero row).
HWY_INLINE float StoreRow(DType pool, const float* x, int64_t n, std::byte* dst) {
  if (pool == DType::F16 || pool == DType::BF16) {
    visit_float(pool, [&](auto tag) { RowFromF32(x, reinterpret_cast<typename decltype(tag)::type*>(dst), n); });
    return 0.0f;
  }
  const float qmax = pool == DType::I8 ? 127.0f : 448.0f;
  const float amax = AbsMax(x, n);
  if (std::isinf(amax)) {  // a NaN or an Inf in the row: NaN scale, zero codes (core/ops/kv/kv_quant.h)
    std::fill(dst, dst + n, std::byte{0});
    return kvq::kNonFiniteScale;
  }
  const float scale = amax / qmax;
  if (scale == 0.0f) {
    std::fill(dst, dst + n, std::byte{0});
    return 0.0f;
  }
  if (pool == DType::I8) QuantizeI8Row(x, n, scale, reinterpret_cast<int8_t*>(dst));
  else QuantizeF8Row(x, n, scale, reinterpret_cast<uint8_t*>(dst));
  return scale;
}

void QuantizeI8(const float* x, int64_t n, float scale, int8_t* codes) { QuantizeI8Row(x, n, scale, codes); }
void QuantizeF8(const float* x, int64_t n, float scale, uint8_t* codes) { QuantizeF8Row(x, n, scale, codes); }

// Rows [r0, r1) of the append (k's rows, then v's), one call per thread's share: the row functions
// inline into one loop, and a row's slot follows from counters (a division per token, not five per
// row; the dispatch, the divisions and the per-row set-up were a fifth of an I8 append).
// - Each row asks for the input row kPrefetchRows on, into L1: its input is read once, and a cold
//   append otherwise waited on each row's first misses (the hardware prefetchers start over at every
//   4 KiB page, a token's rows here). 2, 8 or 16 rows ahead, a whole token ahead at once, or the
//   slots too, were no faster.
// - A large append's rows (job.stream) are staged and written to their slots with streaming stores:
//   whole lines need no write-allocate read (a cold BF16 prefill append 0.75x the time, I8 0.95x).
//   The fence at the end publishes them before the pool is read.
constexpr int64_t kPrefetchRows = 4;
void AppendRows(const KvAppendJob& job, int64_t r0, int64_t r1) {
  const int64_t H = job.heads, hd = job.head_dim, bs = job.block_size;
  const size_t row_bytes = static_cast<size_t>(hd) * job.elem_size;
  std::byte staged[1024];  // read back with unaligned loads
  const bool stream = job.stream && row_bytes <= sizeof(staged);
  // Token tok's head-0 slot; head h's is bs slots per head on.
  auto token_slot = [&](int64_t tok) {
    const int64_t pos = job.cache_len_before + tok;
    return static_cast<int64_t>(job.block_indices[pos / bs]) * H * bs + pos % bs;
  };
  for (int side = 0; side < 2; ++side) {
    const KvAppendSide& s = job.side[side];
    const int64_t a = std::max(r0, side * job.rows) - side * job.rows;
    const int64_t b = std::min(r1, (side + 1) * job.rows) - side * job.rows;
    if (a >= b) continue;
    const int64_t last_tok = (b - 1) / H;
    int64_t tok = a / H, h = a % H, first = token_slot(tok);
    for (int64_t row = a; row < b; ++row) {
      if (row + kPrefetchRows < b) prefetch_l1(s.x + (row + kPrefetchRows) * hd, static_cast<size_t>(hd) * sizeof(float));
      const int64_t slot = first + h * bs;
      std::byte* dst = s.pool + static_cast<size_t>(slot) * row_bytes;
      const float scale = StoreRow(job.dtype, s.x + row * hd, hd, stream ? staged : dst);
      if (stream) StreamBytes(dst, staged, row_bytes);
      if (s.scales) s.scales[slot] = scale;
      if (++h == H) {
        h = 0;
        if (++tok <= last_tok) first = token_slot(tok);
      }
    }
  }
  if (stream) std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "core/ops/paged_params.h"
#include "cpu/kernels.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(AppendRows);
HWY_EXPORT(QuantizeF8);
HWY_EXPORT(QuantizeI8);

void quantize_i8(const float* x, int64_t n, float scale, int8_t* codes) {
  HWY_DYNAMIC_DISPATCH(QuantizeI8)(x, n, scale, codes);
}

void quantize_f8e4m3(const float* x, int64_t n, float scale, uint8_t* codes) {
  HWY_DYNAMIC_DISPATCH(QuantizeF8)(x, n, scale, codes);
}

void append_kv_rows(const KvAppendJob& job, int64_t r0, int64_t r1) { HWY_DYNAMIC_DISPATCH(AppendRows)(job, r0, r1); }

namespace {

constexpr int64_t kStreamAppendBytes = int64_t{256} << 10;

void kv_append_paged(const KvAppendPagedParams& p, TensorMap& t) {
  const bool scaled = has_scales(p.kv_dtype);
  Tensor& k_pool = tensor(t, "layer_k");
  Tensor& v_pool = tensor(t, "layer_v");
  KvAppendJob job;
  job.side[0] = {tensor(t, "k_in").as<float>(), k_pool.data(), scaled ? tensor(t, "layer_k_scales").as<float>() : nullptr};
  job.side[1] = {tensor(t, "v_in").as<float>(), v_pool.data(), scaled ? tensor(t, "layer_v_scales").as<float>() : nullptr};
  job.dtype = k_pool.dtype();
  job.elem_size = dtype_size(job.dtype);
  job.block_indices = tensor(t, "paged_block_indices").as<uint32_t>();
  job.rows = p.tokens * p.num_kv_heads;
  job.heads = p.num_kv_heads;
  job.head_dim = p.head_dim;
  job.block_size = p.block_size;
  job.cache_len_before = p.cache_len_before;
  // A decode step's few rows stay in cache, where the attention after it reads them, and skip the
  // fence's wait for streamed lines (one token streamed: 1.1x the time); a prefill's are streamed.
  job.stream = 2 * job.rows * job.head_dim * static_cast<int64_t>(job.elem_size) >= kStreamAppendBytes;
  parallel_for(2 * job.rows, std::max<int64_t>(1, 4096 / job.head_dim),
               [&](int64_t r0, int64_t r1) { append_kv_rows(job, r0, r1); });
}

}  // namespace

void add_kv_append(KernelTable& k) { k.add(ops::kv_append_paged, kv_append_paged); }

}  // namespace ts::cpu
#endif
