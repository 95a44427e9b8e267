#version 450
#extension GL_GOOGLE_include_directive : require
// The decode GEMV's activations to int8 (act_q8.glsl's layout), once per call before the int8 GEMV
// reads them from every work group: per block of 32 values d = amax / 127 and codes
// round(value / d) to nearest, ties to even, within [-127, 127] (the cpu route's quantizer,
// cpu/quant/quant_gemm.cpp, rounds alike), and the sum of each 16 codes (the GEMV's bias and min
// terms). Work group g takes values [g, g + 1) x TS_Q8_GROUP, invocation t one word (4 values) of
// them; a block is 8 neighbouring invocations, whose peaks meet in shared memory. Each group also
// writes one flag, whether any of its values is not finite (the GEMV then takes its F32 route).
#include "dtype.glsl"
#include "act_q8.glsl"

#define WG 256u
layout(local_size_x = 256) in;
BUF_IN(0, a)
layout(std430, binding = 1) writeonly buffer Buf1 { uint q8[]; };
layout(push_constant) uniform Push { uint k; } p;

shared float peak[WG];
shared int part[WG];
shared bool any_bad;

// Infinite or NaN by its exponent bits: no fast-math setting of a driver can fold this test away.
bool finite(float x) { return (floatBitsToUint(x) & 0x7f800000u) != 0x7f800000u; }

void main() {
  const uint t = gl_LocalInvocationIndex, words = p.k / 4u, lead = t & ~7u, g = gl_WorkGroupID.x;
  if (t == 0u) any_bad = false;
  // A block's eight invocations are all live or all past the end (k / 4 is a multiple of 8, and so
  // is WG): no block straddles a group.
  const uint w = g * WG + t;
  const bool live = w < words;
  vec4 x = vec4(0.0);
  if (live) x = vec4(ld(a[4u * w]), ld(a[4u * w + 1u]), ld(a[4u * w + 2u]), ld(a[4u * w + 3u]));
  const bool ok = finite(x.x) && finite(x.y) && finite(x.z) && finite(x.w);
  const vec4 m = abs(x);
  peak[t] = ok ? max(max(m.x, m.y), max(m.z, m.w)) : -1.0;
  barrier();  // the block's eight peaks written (and any_bad cleared) before any is read
  float amax = 0.0;
  bool block_ok = true;
  for (uint j = 0u; j < 8u; ++j) {
    const float v = peak[lead + j];
    block_ok = block_ok && v >= 0.0;
    amax = max(amax, v);
  }
  if (!ok) any_bad = true;  // only `true` is ever stored after the clearing
  const float inv = block_ok && amax > 0.0 ? 127.0 / amax : 0.0;
  const ivec4 c = block_ok ? clamp(ivec4(roundEven(x * inv)), ivec4(-127), ivec4(127)) : ivec4(0);
  part[t] = c.x + c.y + c.z + c.w;
  if (live) {
    const uvec4 b = uvec4(c) & 0xffu;
    q8[w] = b.x | (b.y << 8) | (b.z << 16) | (b.w << 24);
  }
  barrier();  // the four words' sums of a run, and every verdict, in before they are read
  if (live && (t & 3u) == 0u) q8[TS_Q8_SUMS_AT(p.k) + w / 4u] = uint(part[t] + part[t + 1u] + part[t + 2u] + part[t + 3u]);
  if (live && (t & 7u) == 0u) q8[TS_Q8_SCALES_AT(p.k) + w / 8u] = floatBitsToUint(amax / 127.0);
  if (t == 0u) q8[TS_Q8_FLAGS_AT(p.k) + g] = any_bad ? 1u : 0u;
}
