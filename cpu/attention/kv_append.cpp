// kv_append_paged on cpu: each (token, kv head) row of k_in / v_in quantized (I8, F8_E4M3) or
// converted (F16, BF16) into its pool slot, rows split across threads. The quantization is defined to
// the bit (docs/catalog.md): max|x| in lanes (exact), scale = max / qmax in F32, codes x / scale by IEEE
// division in lanes; I8 rounds half away from zero (trunc, then the fraction decides, never x + 0.5,
// which rounds 0.49999997 up), F8 to nearest even through core/dtype.h's encoder.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/attention/kv_append.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/dtype.h"
#include "core/ops/kv/kv_quant.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// max|x|, with a NaN counted as Inf: Inf for a row that holds a NaN or an Inf (whatever Max does with
// a NaN operand, which differs between targets, never decides it).
float AbsMax(const float* HWY_RESTRICT x, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF inf = hn::Set(d, std::numeric_limits<float>::infinity());
  VF m = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const VF a = hn::Abs(hn::LoadU(d, x + i));
    m = hn::Max(m, hn::IfThenElse(hn::IsNaN(a), inf, a));
  }
  float r = hn::GetLane(hn::MaxOfLanes(d, m));
  for (; i < n; ++i) r = std::max(r, std::isnan(x[i]) ? std::numeric_limits<float>::infinity() : std::fabs(x[i]));
  return r;
}

// codes[i] = round_half_away(x[i] / scale) clamped to [-127, 127]; scale > 0.
void QuantizeI8(const float* HWY_RESTRICT x, int64_t n, float scale, int8_t* HWY_RESTRICT codes) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  const int64_t N = hn::Lanes(d);
  const VF vs = hn::Set(d, scale), half = hn::Set(d, 0.5f), lim = hn::Set(d, 127.0f);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const VF q = hn::Div(hn::LoadU(d, x + i), vs);
    const VF t = hn::Trunc(q);
    const VF away = hn::CopySign(hn::Set(d, 1.0f), q);
    const VF r = hn::IfThenElse(hn::Ge(hn::Abs(hn::Sub(q, t)), half), hn::Add(t, away), t);
    const hn::Rebind<int8_t, decltype(di)> d8;
    hn::StoreU(hn::DemoteTo(d8, hn::ConvertTo(di, hn::Clamp(r, hn::Neg(lim), lim))), d8, codes + i);
  }
  for (; i < n; ++i) codes[i] = static_cast<int8_t>(std::clamp(std::round(x[i] / scale), -127.0f, 127.0f));
}

// x / scale in lanes, each quotient encoded as e4m3fn (nearest even, saturating at 448), the codes
// core/dtype.h's f32_to_f8e4m3 gives, from the quotient's bits rather than through frexp (18x slower:
// kv_append_paged prefill512 F8 took 6.2 ms against I8's 0.35 ms). |q| >= 2^-6 (normal codes): round
// the F32 mantissa to 3 bits, nearest even (add 0x7ffff and the kept LSB below bit 20; a carry moves
// into the exponent), then rebias the exponent from 127 to 7 (120 << 3 in code units). |q| < 2^-6
// (subnormal codes, units of 2^-9): |q| * 2^9, exact, rounded to the nearest even integer; 8 is the
// smallest normal code, as it should be. A vector holding a NaN takes the scalar encoder.
void QuantizeF8(const float* HWY_RESTRICT x, int64_t n, float scale, uint8_t* HWY_RESTRICT codes) {
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, decltype(di)> d8;
  const int64_t N = hn::Lanes(d);
  const VF vs = hn::Set(d, scale), vmax = hn::Set(d, 448.0f), min_normal = hn::Set(d, 0x1p-6f);
  const VF subnormal_units = hn::Set(d, 512.0f);  // 2^9
  const auto one = hn::Set(du, 1u), round_bias = hn::Set(du, 0x7ffffu), rebias = hn::Set(du, 120u << 3);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const VF q = hn::Div(hn::LoadU(d, x + i), vs);
    if (!hn::AllFalse(d, hn::IsNaN(q))) {
      for (int64_t l = 0; l < N; ++l) codes[i + l] = f32_to_f8e4m3(x[i + l] / scale);
      continue;
    }
    const VF a = hn::Min(hn::Abs(q), vmax);  // saturate: everything past 448 is code 0x7e
    const auto bits = hn::BitCast(du, a);
    const auto kept_lsb = hn::And(hn::ShiftRight<20>(bits), one);
    const auto normal = hn::Sub(hn::ShiftRight<20>(hn::Add(bits, hn::Add(round_bias, kept_lsb))), rebias);
    const auto sub = hn::BitCast(du, hn::ConvertTo(di, hn::Round(hn::Mul(a, subnormal_units))));
    const auto mag = hn::IfThenElse(hn::RebindMask(du, hn::Lt(a, min_normal)), sub, normal);
    const auto sign = hn::ShiftRight<24>(hn::And(hn::BitCast(du, q), hn::Set(du, 0x80000000u)));
    // Codes 0 .. 0xff in 32-bit lanes: the saturating demotion keeps each one as it is.
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, hn::Or(mag, sign))), d8, codes + i);
  }
  for (; i < n; ++i) codes[i] = f32_to_f8e4m3(x[i] / scale);
}

// One row into its slot; returns the scale (0 for F16 / BF16 and for a zero row).
float StoreRow(DType pool, const float* x, int64_t n, std::byte* dst) {
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
  if (pool == DType::I8) QuantizeI8(x, n, scale, reinterpret_cast<int8_t*>(dst));
  else QuantizeF8(x, n, scale, reinterpret_cast<uint8_t*>(dst));
  return scale;
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "core/ops/paged_params.h"
#include "cpu/attention/kv_quantize.h"
#include "cpu/kernels.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(StoreRow);
HWY_EXPORT(QuantizeF8);

void quantize_f8e4m3(const float* x, int64_t n, float scale, uint8_t* codes) {
  HWY_DYNAMIC_DISPATCH(QuantizeF8)(x, n, scale, codes);
}

namespace {

void kv_append_paged(const KvAppendPagedParams& p, TensorMap& t) {
  const uint32_t* indices = tensor(t, "paged_block_indices").as<uint32_t>();
  const int64_t rows = p.tokens * p.num_kv_heads, hd = p.head_dim;
  // Each side's input, pool and scales (none for F16 / BF16), looked up once, not per row.
  struct Side {
    const float* x;
    Tensor& pool;
    float* scales;
  };
  const bool scaled = has_scales(p.kv_dtype);
  const Side sides[2] = {
      {tensor(t, "k_in").as<float>(), tensor(t, "layer_k"), scaled ? tensor(t, "layer_k_scales").as<float>() : nullptr},
      {tensor(t, "v_in").as<float>(), tensor(t, "layer_v"), scaled ? tensor(t, "layer_v_scales").as<float>() : nullptr}};
  const size_t es = dtype_size(sides[0].pool.dtype());
  parallel_for(2 * rows, std::max<int64_t>(1, 4096 / hd), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const Side& side = sides[r < rows ? 0 : 1];
      const int64_t row = r % rows, tok = row / p.num_kv_heads, h = row % p.num_kv_heads;
      const int64_t pos = p.cache_len_before + tok, slot = pos % p.block_size;
      const int64_t at = (static_cast<int64_t>(indices[pos / p.block_size]) * p.num_kv_heads + h) * p.block_size + slot;
      const float scale = HWY_DYNAMIC_DISPATCH(StoreRow)(side.pool.dtype(), side.x + row * hd, hd, side.pool.data() + at * hd * es);
      if (side.scales) side.scales[at] = scale;
    }
  });
}

}  // namespace

void add_kv_append(KernelTable& k) { k.add(ops::kv_append_paged, kv_append_paged); }

}  // namespace ts::cpu
#endif
