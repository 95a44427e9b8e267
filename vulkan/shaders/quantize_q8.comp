#version 450
#extension GL_GOOGLE_include_directive : require
// The decode GEMV's activations to int8 (act_q8.glsl's layout), once per call before the int8 GEMV
// reads them from every work group: per block of 32 values d = amax / 127 and codes
// round(value / d) to nearest, ties to even, within [-127, 127] (the cpu route's quantizer,
// cpu/quant/quant_gemm.cpp, rounds alike), and the sum of each 16 codes (the GEMV's bias and min
// terms). One work group does it all (a decode row is some 10^4 values: a few loads a lane), so that
// it can also say, in one word, whether any value is not finite: the GEMV then takes its F32 route.
// Invocation t takes one word (4 values) a pass; a block is 8 neighbouring invocations, whose peaks
// meet in shared memory.
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
  const uint t = gl_LocalInvocationIndex, words = p.k / 4u, lead = t & ~7u;
  if (t == 0u) any_bad = false;
  barrier();  // cleared before any invocation can set it
  bool bad = false;
  // Each pass covers WG words, whole blocks (k / 4 is a multiple of 8, and so is WG): a block's eight
  // invocations are all live or all past the end.
  for (uint w0 = 0u; w0 < words; w0 += WG) {
    const uint w = w0 + t;
    const bool live = w < words;
    vec4 x = vec4(0.0);
    if (live) x = vec4(ld(a[4u * w]), ld(a[4u * w + 1u]), ld(a[4u * w + 2u]), ld(a[4u * w + 3u]));
    const bool ok = finite(x.x) && finite(x.y) && finite(x.z) && finite(x.w);
    const vec4 m = abs(x);
    peak[t] = ok ? max(max(m.x, m.y), max(m.z, m.w)) : -1.0;
    barrier();  // the block's eight peaks written before any is read
    float amax = 0.0;
    bool block_ok = true;
    for (uint j = 0u; j < 8u; ++j) {
      const float v = peak[lead + j];
      block_ok = block_ok && v >= 0.0;
      amax = max(amax, v);
    }
    bad = bad || !block_ok;
    const float inv = block_ok && amax > 0.0 ? 127.0 / amax : 0.0;
    const ivec4 c = block_ok ? clamp(ivec4(roundEven(x * inv)), ivec4(-127), ivec4(127)) : ivec4(0);
    part[t] = c.x + c.y + c.z + c.w;
    if (live) {
      const uvec4 b = uvec4(c) & 0xffu;
      q8[w] = b.x | (b.y << 8) | (b.z << 16) | (b.w << 24);
    }
    barrier();  // the four words' sums of a run written before its first invocation adds them
    if (live && (t & 3u) == 0u) q8[TS_Q8_SUMS_AT(p.k) + w / 4u] = uint(part[t] + part[t + 1u] + part[t + 2u] + part[t + 3u]);
    if (live && (t & 7u) == 0u) q8[TS_Q8_SCALES_AT(p.k) + w / 8u] = floatBitsToUint(amax / 127.0);
    barrier();  // peak and part are rewritten by the next pass
  }
  if (bad) any_bad = true;
  barrier();  // every invocation's verdict in before the flag is written
  if (t == 0u) q8[TS_Q8_FLAG_AT(p.k)] = any_bad ? 1u : 0u;
}
