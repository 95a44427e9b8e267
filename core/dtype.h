#pragma once
// Element types of tensors and their conversions. F16 / BF16 / F8_E4M3 conversions round to nearest
// even, as hardware converters do, so a value stored by any backend is bit-comparable.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace ts {

// I64 is read so that a case holding one (ids exported from PyTorch) gets a clear dtype error from
// validation; no op declares it.
enum class DType { F32, F16, BF16, F64, I32, U32, I8, U8, F8_E4M3, I64 };

std::string_view dtype_name(DType t);             // safetensors spelling: "F32", "BF16", ...
std::optional<DType> dtype_from_name(std::string_view s);
size_t dtype_size(DType t);
bool is_float(DType t);                            // F32, F16, BF16, F64, F8_E4M3
// Unit roundoff of a float dtype: half the gap between 1 and the next value (2^-24 for F32).
double unit_roundoff(DType t);

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_to_f32(uint16_t b) { return bits_f32(static_cast<uint32_t>(b) << 16); }

uint8_t f32_to_f8e4m3(float f);  // e4m3fn: saturates at +-448, NaN stays NaN
float f8e4m3_to_f32(uint8_t v);

// Round a float through a float dtype and back (identity for F32 / F64).
float round_to(DType t, float f);

}  // namespace ts
