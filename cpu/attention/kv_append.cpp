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
    // q' is clamped), the tie test from vreduceps (q' - round(q')), the codes by vpmovdb.
    {
      const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
      __mmask16 near_mask = 0;
      for (; i + 16 <= n; i += 16) {
        const __m512 q = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), vr.raw), lo), hi);
        const __m512 frac = _mm512_reduce_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        near_mask |= _mm512_cmp_ps_mask(_mm512_abs_ps(frac), near_tie.raw, _CMP_GT_OQ);
        const __m512i r = _mm512_cvt_roundps_epi32(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), _mm512_cvtepi32_epi8(r));
      }
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
    // The same steps in AVX-512's own instructions, a quarter fewer micro-ops: the subnormal codes
    // and their tie test straight from units (a rounding conversion and vreduceps, units - round),
    // the masks merged as they are made, the codes by vpmovdb.
    {
      constexpr int kRne = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
      __mmask16 nan_mask = 0, near_mask = 0;
      for (; i + 16 <= n; i += 16) {
        const __m512 q = _mm512_mul_ps(_mm512_loadu_ps(x + i), vr.raw);
        nan_mask |= _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q);
        const __m512 a = _mm512_min_ps(_mm512_abs_ps(q), vmax.raw);
        const __m512i bits = _mm512_castps_si512(a);
        const __mmask16 subnormal = _mm512_cmp_ps_mask(a, min_normal.raw, _CMP_LT_OQ);
        const __m512 units = _mm512_mul_ps(a, subnormal_units.raw);
        near_mask |= _mm512_cmplt_epu32_mask(_mm512_sub_epi32(_mm512_and_si512(bits, dropped.raw), tie_low.raw), tie_span.raw);
        near_mask |= _mm512_mask_cmp_ps_mask(subnormal, _mm512_abs_ps(_mm512_reduce_ps(units, kRne)), near_half.raw, _CMP_GT_OQ);
        const __m512i kept_lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 20), one.raw);
        __m512i mag = _mm512_sub_epi32(_mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(round_bias.raw, kept_lsb)), 20), rebias.raw);
        mag = _mm512_mask_mov_epi32(mag, subnormal, _mm512_cvt_roundps_epi32(units, kRne));
        const __m512i sign = _mm512_srli_epi32(_mm512_and_si512(_mm512_castps_si512(q), sign_bit.raw), 24);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), _mm512_cvtepi32_epi8(_mm512_or_si512(mag, sign)));
      }
      nan = hn::Or(nan, hn::Mask<DF>{nan_mask});
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
