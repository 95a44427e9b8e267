// kv_append_paged: each (side, token, kv head) row of k_in / v_in (F32) quantized (I8, F8_E4M3) or
// converted (F16, BF16) into its pool slot, found through the block indices. One work-group per row:
// the row's max |x| by a work-group reduction, scale = max / qmax, codes x / scale. Defined to the bit
// (docs/catalog.md), so the program is built with correctly rounded division: I8 rounds half away from zero
// (the fraction decides, never x + 0.5, which rounds 0.49999997 up), F8_E4M3 to nearest even,
// saturating at 448; a zero row stores scale 0 and zero codes, a row with a NaN or an Inf the NaN
// scale and zero codes. Only the row's own slot is written.
//   -DKV_<KvDtype name> (the pool: kv.h), with -cl-fp32-correctly-rounded-divide-sqrt
#include "kv.h"
#include "kv_append_args.h"

#if defined(KV_I8)
#define QMAX ((float)KV_DTYPE_I8_CODE_MAX)
inline char encode(float q) {
  const float t = trunc(q);
  const float r = fabs(q - t) >= 0.5f ? t + copysign(1.0f, q) : t;
  return (char)clamp(r, -127.0f, 127.0f);
}
#elif defined(KV_F8_E4M3)
#define QMAX ((float)KV_DTYPE_F8_E4M3_CODE_MAX)
// e4m3fn, nearest even: below 2^-6 in units of 2^-9 (8 units is the smallest normal, correctly);
// above, the F32's exponent and top 3 mantissa bits rounded together (a carry moves the exponent)
// with the bias moved from 127 to 7; 448 and beyond saturate.
inline uchar encode(float f) {
  const uint sign = (as_uint(f) >> 24) & 0x80u;
  const float a = fabs(f);
  if (isnan(f)) return (uchar)(sign | 0x7fu);
  if (a >= QMAX) return (uchar)(sign | 0x7eu);
  if (a < 0x1p-6f) return (uchar)(sign | (uint)rint(a * 512.0f));
  const uint u = as_uint(a);
  const uint r = (u + 0x7ffffu + ((u >> 20) & 1u)) >> 20;
  return (uchar)(sign | min(r - (120u << 3), 0x7eu));
}
#endif

__kernel void kv_append(__constant KvAppendArgs* args, __global const float* k_in, __global const float* v_in,
                        __global kv_t* layer_k, __global kv_t* layer_v, __global float* k_scales,
                        __global float* v_scales, __global const uint* indices, __local float* red) {
  TS_ARGS_READ(TS_KV_APPEND_ARGS)
  const int lid = get_local_id(0), g = get_local_size(0);
  const int row = get_group_id(1), side = get_group_id(2);
  const int tok = row / nkv, h = row % nkv, pos = cache_len_before + tok;
  const size_t at = ((size_t)indices[pos / block_size] * nkv + h) * block_size + pos % block_size;
  __global const float* x = (side ? v_in : k_in) + (size_t)row * hd;
  __global kv_t* dst = (side ? layer_v : layer_k) + at * hd;
#ifdef QMAX
  // max|x| with a NaN counted as Inf (by its bits: fmax's NaN rule never decides it), so the row's
  // maximum is Inf exactly when the row holds a NaN or an Inf; such a row stores the NaN scale
  // 0x7fc00000 and zero codes (core/ops/kv/kv_quant.h).
  float m = 0.0f;
  for (int c = lid; c < hd; c += g) m = fmax(m, as_float(min(as_uint(x[c]) & 0x7fffffffu, 0x7f800000u)));
  const float amax = wg_max(m, red);
  const bool non_finite = as_uint(amax) == 0x7f800000u;
  const float scale = non_finite ? as_float(0x7fc00000u) : amax / QMAX;
  if (lid == 0) (side ? v_scales : k_scales)[at] = scale;
  for (int c = lid; c < hd; c += g) dst[c] = non_finite || scale == 0.0f ? 0 : encode(x[c] / scale);
#else
  for (int c = lid; c < hd; c += g) KST(dst, c, x[c]);
#endif
}
