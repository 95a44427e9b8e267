#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_gptq and gemm_awq: out[i, j] = sum_k a[i, k] * W[k, j], W[k, j] = scale[g, j] * (q[k, j] -
// zero[g, j]), the bit positions of core/quant/packing.h. One invocation per output column j and per
// MR activation rows (work-group y): it decodes W[k, j] once per k in registers and uses it for the
// MR rows; neighbouring invocations read neighbouring words of qweight (GPTQ packs along k, so the
// columns of one int32 row are adjacent; AWQ's eight columns of a word share it). g is g_idx[k]
// under act-order, else k / group_size; the scale and zero are reloaded only when g changes.
// Specialization constants: 0 the work-group size, 1 AWQ (else GPTQ), 2 bits, 3 act-order.
#include "dtype.glsl"

#define MR 8u

layout(local_size_x = 64, local_size_x_id = 0) in;
layout(constant_id = 1) const bool AWQ = false;
layout(constant_id = 2) const uint BITS = 4;
layout(constant_id = 3) const bool ACT_ORDER = false;

BUF_IN(0, a)
layout(std430, binding = 1) readonly buffer Buf1 { uint qweight[]; };
layout(std430, binding = 2) readonly buffer Buf2 { uint qzeros[]; };
layout(std430, binding = 3) readonly buffer Buf3 { uint scales[]; };  // F16 [G, n], two per word
BUF_OUT(4, o)
layout(std430, binding = 5) readonly buffer Buf5 { uint g_idx[]; };   // act-order only
layout(push_constant) uniform Push { uint m, n, k, group_size; } p;

const uint kAwqSlot[8] = uint[8](0u, 4u, 1u, 5u, 2u, 6u, 3u, 7u);

uint field(uint word, uint shift, uint bits) { return (word >> shift) & ((1u << bits) - 1u); }

uint weight_code(uint kk, uint j) {
  if (AWQ) return field(qweight[kk * (p.n / 8u) + j / 8u], 4u * kAwqSlot[j % 8u], 4u);
  const uint per = 32u / BITS;
  return field(qweight[(kk / per) * p.n + j], BITS * (kk % per), BITS);
}

// GPTQ stores its zeros minus one.
float zero_of(uint g, uint j) {
  if (AWQ) return float(field(qzeros[g * (p.n / 8u) + j / 8u], 4u * kAwqSlot[j % 8u], 4u));
  const uint per = 32u / BITS;
  return float(field(qzeros[g * (p.n / per) + j / per], BITS * (j % per), BITS) + 1u);
}

float scale_of(uint g, uint j) {
  const uint e = g * p.n + j;
  return unpackHalf2x16(scales[e >> 1] >> ((e & 1u) * 16u)).x;
}

void main() {
  const uint j = gl_GlobalInvocationID.x;
  if (j >= p.n) return;  // no barriers below, so leaving early is safe
  for (uint m0 = gl_WorkGroupID.y * MR; m0 < p.m; m0 += gl_NumWorkGroups.y * MR) {
    float acc[MR];
    for (uint i = 0u; i < MR; ++i) acc[i] = 0.0;
    uint g_cur = 0xffffffffu;
    float s = 0.0, z = 0.0;
    for (uint kk = 0u; kk < p.k; ++kk) {
      const uint g = ACT_ORDER ? g_idx[kk] : kk / p.group_size;
      if (g != g_cur) {
        g_cur = g;
        s = scale_of(g, j);
        z = zero_of(g, j);
      }
      const float wv = s * (float(weight_code(kk, j)) - z);
      for (uint i = 0u; i < MR; ++i) {
        if (m0 + i >= p.m) break;
        acc[i] = fma(ld(a[(m0 + i) * p.k + kk]), wv, acc[i]);
      }
    }
    for (uint i = 0u; i < MR; ++i)
      if (m0 + i < p.m) o[(m0 + i) * p.n + j] = st(acc[i]);
  }
}
