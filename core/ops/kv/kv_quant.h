#pragma once
// The KV element types of docs/catalog.md's kv family, in one place: the quantization of one (token, kv head)
// row into a pool, used by the reference of kv_append_paged and by the generators that fill pools.
// Defined in reference/kv_quant.cpp, compiled with the reference's flags (no FMA contraction).
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kinds.h"
#include "core/tensor.h"

namespace ts::kvq {

// Whether a pool carries scales is ts::has_scales (core/kinds.h, from core/kinds.inc's list).
// The largest code's magnitude: 127 (I8), 448 (F8_E4M3), core/kinds.inc's.
constexpr float qmax(KvDtype k) { return kind_row(k).code_max; }

// The scale of a row that holds a NaN or an Inf (I8, F8_E4M3): the quiet NaN 0x7fc00000, beside codes
// that are all 0, so every element of the row loads as NaN (0 x NaN). No finite scale can stand for
// such a row (max|x| is Inf or undefined), and storing NaN keeps the special value visible to whatever
// reads the pool instead of turning it into +-qmax or 0. Every backend stores exactly these bits
// (docs/catalog.md, "Non-finite rows of a quantized KV pool").
inline constexpr uint32_t kNonFiniteScaleBits = 0x7fc00000u;
inline constexpr float kNonFiniteScale = std::bit_cast<float>(kNonFiniteScaleBits);

// Writes row x[0, n) into pool elements [first, first + n): scale = max|x| / qmax in F32; I8 =
// round_half_away(x / scale) clamped to [-127, 127], F8_E4M3 = x / scale to nearest even, saturating
// at 448; a zero row stores scale 0 and zeros; a row with any NaN or Inf stores kNonFiniteScale and
// zeros. F16 / BF16: x rounded to nearest even (NaN and Inf kept). Returns the scale (0 for F16 / BF16).
float store_row(KvDtype k, const float* x, int64_t n, Tensor& pool, int64_t first);

// Element i of a pool as the value it stands for (code x scale for I8 and F8_E4M3).
inline double load(const Tensor& pool, int64_t i, double scale, bool scaled) {
  return scaled ? pool.get(i) * scale : pool.get(i);
}

}  // namespace ts::kvq
