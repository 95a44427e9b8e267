#include "core/dtype.h"

#include <cmath>

namespace ts {

namespace {
struct Info { DType t; std::string_view name; size_t size; bool fp; double u; };
constexpr Info kInfo[] = {
    {DType::F32, "F32", 4, true, 0x1p-24},  {DType::F16, "F16", 2, true, 0x1p-11},
    {DType::BF16, "BF16", 2, true, 0x1p-8}, {DType::F64, "F64", 8, true, 0x1p-53},
    {DType::I32, "I32", 4, false, 0},       {DType::U32, "U32", 4, false, 0},
    {DType::I8, "I8", 1, false, 0},         {DType::U8, "U8", 1, false, 0},
    {DType::F8_E4M3, "F8_E4M3", 1, true, 0x1p-4}, {DType::I64, "I64", 8, false, 0},
};
const Info& info(DType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
size_t dtype_size(DType t) { return info(t).size; }
bool is_float(DType t) { return info(t).fp; }
double unit_roundoff(DType t) { return info(t).u; }

std::optional<DType> dtype_from_name(std::string_view s) {
  for (const auto& i : kInfo)
    if (i.name == s) return i.t;
  return std::nullopt;
}

uint16_t f32_to_f16(float f) {
  const uint32_t u = f32_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (absu >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: Inf
  if (absu < 0x38800000u) {
    // Subnormal or zero in f16: scale into the integer range and round to nearest even.
    const float a = bits_f32(absu);
    const float scaled = a * 0x1p24f;  // exact: units of the smallest f16 subnormal
    const uint32_t q = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t mant = absu & 0x7fffffu;
  uint32_t exp = (absu >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carries into the exponent correctly
  return static_cast<uint16_t>(sign | h);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exp == 31) return bits_f32(sign | 0x7f800000u | (mant << 13));
  return bits_f32(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint8_t f32_to_f8e4m3(float f) {
  // e4m3fn: bias 7, 3 mantissa bits, no infinities, 0x7f/0xff are NaN, max finite 448.
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7f | sign;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 448.0) return sign | 0x7e;  // saturate
  if (a < 0x1p-6) {
    const double q = std::nearbyint(a * 0x1p9);  // subnormal units of 2^-9
    return sign | static_cast<uint8_t>(q);        // q == 8 becomes the smallest normal, correctly
  }
  int e;
  const double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  double q = std::nearbyint(m * 16.0);   // 1 implicit + 3 explicit bits
  if (q == 16.0) { q = 8.0; ++e; }
  const int biased = e - 1 + 7;
  if (biased > 15 || (biased == 15 && q - 8 > 6)) return sign | 0x7e;
  return sign | static_cast<uint8_t>((biased << 3) | (static_cast<int>(q) - 8));
}

float f8e4m3_to_f32(uint8_t v) {
  const bool neg = v & 0x80;
  const int exp = (v >> 3) & 0xf;
  const int mant = v & 7;
  if (exp == 15 && mant == 7) return std::nanf("");
  const float r = exp == 0 ? std::ldexp(static_cast<float>(mant), -9)
                           : std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
  return neg ? -r : r;
}

float round_to(DType t, float f) {
  switch (t) {
    case DType::F16: return f16_to_f32(f32_to_f16(f));
    case DType::BF16: return bf16_to_f32(f32_to_bf16(f));
    case DType::F8_E4M3: return f8e4m3_to_f32(f32_to_f8e4m3(f));
    default: return f;
  }
}

}  // namespace ts
