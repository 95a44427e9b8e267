#version 450
#extension GL_GOOGLE_include_directive : require
// kv_append_paged: each (side, token, kv head) row of k_in / v_in (F32 [tokens, nkv, hd]) into its
// pool slot, position cache_len_before + token through paged_block_indices (ferrum layout):
// quantized (I8, F8_E4M3: scale = max|x| / qmax, codes x / scale; a zero row stores scale 0 and
// zeros, a row with a NaN or an Inf the NaN scale and zeros) or converted (F16, BF16), bit for bit
// as the reference. One work group per row (grid stride); invocation t owns whole 32-bit words of the row (head_dim a multiple of 4), so rows never
// share a word and nothing else in the pool is touched.
#include "dtype.glsl"

#define WG 64
#include "reduce.glsl"
#include "kv_quant.glsl"

#include "kinds.glsl"

layout(local_size_x = WG) in;
layout(std430, binding = 0) readonly buffer KIn { float k_in[]; };
layout(std430, binding = 1) readonly buffer VIn { float v_in[]; };
layout(std430, binding = 2) writeonly buffer KPool { uint k_pool[]; };
layout(std430, binding = 3) writeonly buffer VPool { uint v_pool[]; };
layout(std430, binding = 4) writeonly buffer KScale { float k_scales[]; };  // I8 / F8 only
layout(std430, binding = 5) writeonly buffer VScale { float v_scales[]; };
BUF_IDX(6, indices)
#include "kv_append_push.glsl"  // the push block p

// Element x of the row as its code (a byte, or 16 bits for F16 / BF16).
uint code(float x, float scale) {
  if (p.kv_kind == KV_DTYPE_F16) return f16_code(x);
  if (p.kv_kind == KV_DTYPE_BF16) return bf16_bits(x);
  if (scale == 0.0 || floatBitsToUint(scale) == 0x7fc00000u) return 0u;  // zero or non-finite row
  const float q = div_rn(x, scale);
  return p.kv_kind == KV_DTYPE_I8 ? i8_code(q) : f8_code(q);
}

void main() {
  const uint t = gl_LocalInvocationIndex;
  const bool bytes = kv_elem_bytes(p.kv_kind) == 1u;
  const uint per_word = bytes ? 4u : 2u, words = p.hd / per_word;
  for (uint rr = gl_WorkGroupID.x; rr < 2u * p.rows; rr += gl_NumWorkGroups.x) {
    const bool is_v = rr >= p.rows;
    const uint row = is_v ? rr - p.rows : rr, tok = row / p.nkv, h = row % p.nkv;
    const uint pos = p.cache_len_before + tok;
    const uint at = (indices[pos / p.block_size] * p.nkv + h) * p.block_size + pos % p.block_size;
    const uint src = row * p.hd;
    float scale = 0.0;
    if (bytes) {
      // max|x| with a NaN counted as Inf, by the bits (what max() does with a NaN is the driver's):
      // the maximum is Inf exactly when the row holds a NaN or an Inf, and such a row stores the NaN
      // scale 0x7fc00000 and zero codes (core/ops/kv/kv_quant.h).
      float m = 0.0;
      for (uint i = t; i < p.hd; i += WG) {
        const uint bits = floatBitsToUint(is_v ? v_in[src + i] : k_in[src + i]) & 0x7fffffffu;
        m = max(m, uintBitsToFloat(min(bits, 0x7f800000u)));
      }
      const float amax = wg_max(m);  // uniform: every invocation has it
      scale = floatBitsToUint(amax) == 0x7f800000u ? uintBitsToFloat(0x7fc00000u)
                                                   : div_rn(amax, kv_code_max(p.kv_kind));
      if (t == 0u) {
        if (is_v) v_scales[at] = scale;
        else k_scales[at] = scale;
      }
    }
    for (uint w = t; w < words; w += WG) {
      uint packed = 0u;
      for (uint e = 0u; e < per_word; ++e) {
        const uint i = src + w * per_word + e;
        packed |= code(is_v ? v_in[i] : k_in[i], scale) << (e * (32u / per_word));
      }
      if (is_v) v_pool[at * words + w] = packed;
      else k_pool[at * words + w] = packed;
    }
  }
}
