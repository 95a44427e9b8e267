#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_quant at m = 1 (decode), shaped for GPUs: out[j] = sum_k a[k] * dequant(w)[j, k], bound by the
// GGUF weight bytes. A work group owns NR rows at a time (grid-stride over row blocks). Each row's
// packed quants are cut into 4-byte slots (a word of nibbles: 8 values; of int8: 4), and invocation t
// takes slots t, t + WG, ... of all NR rows: a subgroup's loads of one row are consecutive words (one
// 128-byte line a 32-wide subgroup), every weight byte is loaded once, and the slot's activations
// (loaded once, 16 bytes at a time in F32) serve all NR rows, so the bytes in flight per invocation
// are NR words plus their scales. The decode is off the critical path: four values a word unpacked
// with masks, made floats exactly by the exponent trick (2^23 + q as float bits, minus 2^23: no
// integer-to-float conversion, a quarter-rate instruction on NVIDIA GPUs), the block's scale applied
// once per slot, not per value. Rows are then summed with subgroup arithmetic and one partial per
// subgroup through shared memory, or, without subgroup arithmetic, every invocation's partials
// through shared memory (the same order on every run). WG and NR are specialization constants the
// planner picks from the device (vulkan/plan_quant.cpp: gemv_shape).
#include "dtype.glsl"

#define MAX_NR 8u
#define MAX_WG 256u

#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 128, local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0;
layout(constant_id = 2) const uint NR = 4;  // rows per work group, 1 .. MAX_NR
#define WG gl_WorkGroupSize.x

BUF_IN(0, a)
layout(std430, binding = 1) readonly buffer Buf1 { uint w[]; };
BUF_OUT(2, o)
#ifdef DT_F32
// The activations again, 16 bytes at a time (a slot's four values start at a multiple of 4).
layout(std430, binding = 3) readonly buffer Buf3 { vec4 a4[]; };
#endif
layout(push_constant) uniform Push { uint m, n, k, ldo, n_off; } p;

#define QUANT_BUF w
#include "quant.glsl"

shared float part[MAX_NR][MAX_WG];

// Four consecutive activations from index i (a multiple of 4).
vec4 x4(uint i) {
#ifdef DT_F32
  return a4[i >> 2];
#else
  return vec4(ld(a[i]), ld(a[i + 1u]), ld(a[i + 2u]), ld(a[i + 3u]));
#endif
}

// q (below 2^23) as an exact float, less `bias`: 2^23 + q in a float's bits is exactly 2^23 + q.
float fq(uint q, float bias) { return uintBitsToFloat(0x4B000000u | q) - (8388608.0 + bias); }

// The four bytes of `word` (each below 2^8) as exact floats, less `bias`: 2^23 + b in a float's bits
// is exactly 2^23 + b, so one subtraction gives b - bias.
vec4 bytes4(uint word, float bias) {
  const uvec4 b = (uvec4(word) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu;
  return uintBitsToFloat(uvec4(0x4B000000u) | b) - vec4(8388608.0 + bias);
}

// Slots per row: a word of packed quants each.
uint slots_per_row(uint k) {
  if (KIND == QK_Q8_0) return k / 4u;
  return k / 8u;  // Q4_0, Q4_1: 16 bytes of nibbles per 32 values; K kinds: 128 bytes (ql) per 256
}

// Where slot s of a row's packed quants lies: the activation index of its first value (x0) and of its
// second group of four (x1: the high nibbles; unused by Q8_0).
void slot_values(uint s, out uint x0, out uint x1) {
  if (KIND == QK_Q4_0 || KIND == QK_Q4_1) {
    x0 = (s >> 2) * 32u + 4u * (s & 3u);  // low nibbles: values b of the block; high: 16 + b
    x1 = x0 + 16u;
  } else if (KIND == QK_Q8_0) {
    x0 = (s >> 3) * 32u + 4u * (s & 7u);
    x1 = x0;
  } else if (KIND == QK_Q4_K || KIND == QK_Q5_K) {
    const uint wi = s & 31u;  // group g = wi / 8 (64 values: low nibbles 64g + l, high 64g + 32 + l)
    x0 = (s >> 5) * 256u + 64u * (wi >> 3) + 4u * (wi & 7u);
    x1 = x0 + 32u;
  } else {  // Q6_K: half h, parity r, word i: values 128h + 32r + 4i + b (low), + 64 (high)
    const uint wi = s & 31u;
    x0 = (s >> 5) * 256u + 128u * (wi >> 4) + 32u * ((wi >> 3) & 1u) + 4u * (wi & 7u);
    x1 = x0 + 64u;
  }
}

// Slot s of the row starting at byte `row` against its activations v0 (x0 ..) and v1 (x1 ..).
float slot_dot(uint row, uint s, vec4 v0, vec4 v1) {
  if (KIND == QK_Q4_0 || KIND == QK_Q4_1) {
    const bool one = KIND == QK_Q4_1;
    const uint base = row + (s >> 2) * (one ? 20u : 18u);
    const uint q = qword(base + (one ? 4u : 2u) + 4u * (s & 3u));
    const float bias = one ? 0.0 : 8.0;
    const float dot_ = dot(bytes4(q & 0x0f0f0f0fu, bias), v0) + dot(bytes4((q >> 4) & 0x0f0f0f0fu, bias), v1);
    if (one) return fma(qhalf(base), dot_, qhalf(base + 2u) * (dot(v0, vec4(1.0)) + dot(v1, vec4(1.0))));
    return qhalf(base) * dot_;
  } else if (KIND == QK_Q8_0) {
    const uint base = row + (s >> 3) * 34u;
    const uint q = qword(base + 2u + 4u * (s & 7u)) ^ 0x80808080u;  // each byte: its int8 value + 128
    return qhalf(base) * dot(bytes4(q, 128.0), v0);
  } else if (KIND == QK_Q4_K || KIND == QK_Q5_K) {
    const bool five = KIND == QK_Q5_K;
    const uint base = row + (s >> 5) * (five ? 176u : 144u), wi = s & 31u, g = wi >> 3;
    // The header (d, dmin, 12 scale bytes): four words every invocation of the super-block loads alike
    // (a 32-wide subgroup is one super-block's 32 slots: one broadcast load each).
    const uvec4 hdr = uvec4(w[base >> 2], w[(base >> 2) + 1u], w[(base >> 2) + 2u], w[(base >> 2) + 3u]);
    const uint q = w[(base + (five ? 48u : 16u)) / 4u + wi];
    uint lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;
    if (five) {  // bit 2g (low) / 2g + 1 (high) of each qh byte is the value's fifth bit
      const uint h = w[(base + 16u) / 4u + (wi & 7u)];
      lo |= ((h >> (2u * g)) & 0x01010101u) << 4;
      hi |= ((h >> (2u * g + 1u)) & 0x01010101u) << 4;
    }
    // ggml's get_scale_min_k4 for sub-blocks 2g and 2g + 1, four sub-blocks a word and no branch (the
    // groups of one subgroup differ): sub-blocks 0-3 keep the low 6 bits of scale bytes 0-3 (scales)
    // and 4-7 (mins); 4-7 take a nibble of bytes 8-11 and the top 2 bits of bytes 0-3 / 4-7 above it.
    const uint scw = g < 2u ? hdr.y & 0x3f3f3f3fu : (hdr.w & 0x0f0f0f0fu) | ((hdr.y >> 2) & 0x30303030u);
    const uint mnw = g < 2u ? hdr.z & 0x3f3f3f3fu : ((hdr.w >> 4) & 0x0f0f0f0fu) | ((hdr.z >> 2) & 0x30303030u);
    const uint at = 16u * (g & 1u);  // bytes 2g, 2g + 1 of the four
    const vec2 sc = vec2(fq((scw >> at) & 0xffu, 0.0), fq((scw >> (at + 8u)) & 0xffu, 0.0));
    const vec2 mn = vec2(fq((mnw >> at) & 0xffu, 0.0), fq((mnw >> (at + 8u)) & 0xffu, 0.0));
    const vec2 dm = unpackHalf2x16(hdr.x);  // d, dmin
    const float sums = sc.x * dot(bytes4(lo, 0.0), v0) + sc.y * dot(bytes4(hi, 0.0), v1);
    const float mins = mn.x * dot(v0, vec4(1.0)) + mn.y * dot(v1, vec4(1.0));
    return dm.x * sums - dm.y * mins;
  } else {  // Q6_K {ql[128], qh[64], scales[16] int8, d}
    const uint base = row + (s >> 5) * 210u, wi = s & 31u, h = wi >> 4, r = (wi >> 3) & 1u, i = wi & 7u;
    const uint ql = qword(base + 64u * h + 32u * r + 4u * i);
    const uint qh = qword(base + 128u + 32u * h + 4u * i);
    const uint lo = (ql & 0x0f0f0f0fu) | (((qh >> (2u * r)) & 0x03030303u) << 4);
    const uint hi = ((ql >> 4) & 0x0f0f0f0fu) | (((qh >> (2u * r + 4u)) & 0x03030303u) << 4);
    const uint sc = base + 192u + 8u * h + 2u * r + (i >> 2);  // scale 8h + l / 16 + 2i, i = r and r + 2
    const float s0 = fq(qbyte(sc) ^ 0x80u, 128.0), s1 = fq(qbyte(sc + 4u) ^ 0x80u, 128.0);  // int8 scales
    return qhalf(base + 208u) * (s0 * dot(bytes4(lo, 32.0), v0) + s1 * dot(bytes4(hi, 32.0), v1));
  }
}

void main() {
  const uint t = gl_LocalInvocationIndex;
#ifdef USE_SUBGROUP
  const uint slot = gl_SubgroupID, nslots = gl_NumSubgroups;
#else
  const uint slot = t, nslots = WG;
#endif
  const uint row_bytes = quant_row_bytes(KIND, p.k), slots = slots_per_row(p.k);
  for (uint j0 = gl_WorkGroupID.x * NR; j0 < p.n; j0 += gl_NumWorkGroups.x * NR) {
    const uint rows = min(NR, p.n - j0);
    float acc[MAX_NR];
    for (uint r = 0u; r < NR; ++r) acc[r] = 0.0;
    for (uint s = t; s < slots; s += WG) {
      uint x0, x1;
      slot_values(s, x0, x1);
      const vec4 v0 = x4(x0), v1 = KIND == QK_Q8_0 ? vec4(0.0) : x4(x1);
      // The NR rows' loads are independent of one another: all in flight together.
      for (uint r = 0u; r < NR; ++r)
        if (r < rows) acc[r] += slot_dot((j0 + r) * row_bytes, s, v0, v1);
    }
    for (uint r = 0u; r < NR; ++r) {
#ifdef USE_SUBGROUP
      const float v = subgroupAdd(acc[r]);
      if (subgroupElect()) part[r][slot] = v;
#else
      part[r][slot] = acc[r];
#endif
    }
    barrier();  // every partial written before any row is summed
    if (t < rows) {
      float sum = 0.0;
      for (uint x = 0u; x < nslots; ++x) sum += part[t][x];
      o[p.n_off + j0 + t] = st(sum);
    }
    barrier();  // the partials are rewritten by the next row block
  }
}
