#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_quant at m = 1 (decode), shaped for GPUs: out[j] = sum_k a[k] * dequant(w)[j, k], bound by the
// GGUF weight bytes. A work group owns NR rows at a time (grid-stride over row blocks). Each row's
// packed quants are cut into 16-byte chunks (four words of nibbles: 32 values; of int8: 16), every
// chunk inside one block and under one scale, and invocation t takes chunks t, t + WG, ... of all NR
// rows. What a GPU's memory needs is bytes in flight: each invocation issues its NR chunks' loads
// (16 bytes each, one 16-byte load where the kind keeps chunks 16-byte aligned: Q4_K, Q5_K) and their
// scales before it uses any, as the read roof's stream does (four 16-byte loads a lane), and no branch
// splits them (a row past n reads row n - 1 again, its sum discarded). A subgroup's chunks are
// neighbours: consecutive 16-byte runs of one row, every weight byte loaded once. A chunk's
// activations (loaded 16 bytes at a time in F32) serve all NR rows. The decode is off the critical
// path: four values a word unpacked with masks, made floats exactly by the exponent trick (2^23 + q as
// float bits, minus 2^23: no integer-to-float conversion, a quarter-rate instruction on NVIDIA GPUs),
// a block's scale applied once per chunk, not per value. Rows are then summed with subgroup
// arithmetic and one partial per subgroup through shared memory, or, without subgroup arithmetic,
// every invocation's partials through shared memory (the same order on every run). WG and NR are
// specialization constants the planner picks from the device (vulkan/quant/quant_gemm.cpp: gemv_shape).
//
// KERNEL_GEMV_QUANT_Q8, the int8 route (TOUCHSTONE_VULKAN_GEMV_ROUTE=int8): the activations were
// quantized once per call (quantize_q8.comp, act_q8.glsl: int8 codes, a scale per 32 values, a sum
// per 16 codes), and each word of weights meets its four codes in one packed dot product (OpSUDot:
// signed codes by unsigned weight bytes, a dp4a on GPUs that have one) summed exactly in int32; a
// run's bias or min is its integer code sum times the weight's offset, so a chunk costs two float
// operations a run where the F32 route spends five a value (unpack, the exponent trick, the FMA).
// Written for a GEMV bound by its integer issue; on an H200 it was not (2026-11-27: the int8 route
// took 1.05-1.39x the F32 route's time), so it is not the default. The outputs are judged by the
// int8 route's NMSE bound (core/quant/int8_route.h). Where any activation is not finite, the
// quantizer raises a flag and the whole product takes the F32 route (a branch uniform over the
// dispatch, outside the loops).
//
// Two ways to share a row block (MODE, with subgroup arithmetic): 0, the work group's invocations
// take turns along NR rows together and meet in shared memory (the shape CPU drivers want: few
// barriers, long loops); 1, each subgroup owns NR rows of its own, its lanes take turns along them
// in batches of UNROLL chunks whose loads are all issued before any is used, and one subgroupAdd a
// row ends it, with no shared memory and no barrier. Mode 1 keeps every lane busy on a row shorter
// than the group (on an H200, 2026-11-27, two calls of one lease: Q4_K at k = 4096 in 0.83x mode
// 0's time); on long rows
// the two were within 10% there (the planner's choice: vulkan/quant/quant_gemm.cpp, gemv_shape).
#include "dtype.glsl"

#define MAX_NR 8u
#define MAX_WG 256u

#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 128, local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0;
layout(constant_id = 2) const uint NR = 4;  // rows per work group (mode 1: per subgroup), 1 .. MAX_NR
layout(constant_id = 3) const uint MODE = 0;    // 0: rows shared by the work group; 1: rows per subgroup
layout(constant_id = 4) const uint UNROLL = 1;  // mode 1: chunks a lane loads before it uses them, 1 .. 4
#define WG gl_WorkGroupSize.x

BUF_IN(0, a)
layout(std430, binding = 1) readonly buffer Buf1 { uint w[]; };
// The same weights as 16-byte vectors, for the kinds whose chunks are 16-byte aligned (a block of 144
// or 176 bytes, a row of whole blocks): one load a chunk.
layout(std430, binding = 1) readonly buffer Buf1v { uvec4 w4[]; };
BUF_OUT(2, o)
#ifdef DT_F32
// The activations again, 16 bytes at a time (a chunk's runs of values start at multiples of 16).
layout(std430, binding = 3) readonly buffer Buf3 { vec4 a4[]; };
#endif
layout(push_constant) uniform Push { uint m, n, k, ldo, n_off; } p;
#ifdef KERNEL_GEMV_QUANT_Q8
#extension GL_EXT_spirv_intrinsics : require
#include "act_q8.glsl"
layout(std430, binding = 4) readonly buffer Buf4 { uint q8[]; };
layout(std430, binding = 4) readonly buffer Buf4v { uvec4 q8v[]; };  // the codes, 16 at a time
// OpSUDot (SPV_KHR_integer_dot_product) on packed 4 x 8-bit vectors: the sum of a's signed bytes times
// b's unsigned bytes. glslang's spirv_instruction names it, ahead of a GLSL built-in for it.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int sudot4(uint a, uint b, spirv_literal int packed_4x8);
#endif

#define QUANT_BUF w
#include "quant.glsl"

shared float part[MAX_NR][MAX_WG];

#include "act4.glsl"
#include "codes.glsl"

// The four bytes of `word` (each below 2^8) as exact floats, less `bias`: 2^23 + b in a float's bits
// is exactly 2^23 + b, so one subtraction gives b - bias.
vec4 bytes4(uint word, float bias) {
  const uvec4 b = (uvec4(word) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu;
  return uintBitsToFloat(uvec4(0x4B000000u) | b) - vec4(8388608.0 + bias);
}

// Sixteen bytes from byte offset `off`: one vector load where it is a multiple of 16, four words where
// of 4, else (an even offset) five words shifted by a half word, with no branch.
uvec4 chunk16(uint off) {
  if (KIND == QK_Q4_K || KIND == QK_Q5_K) return w4[off >> 4];
  const uint i = off >> 2;
  if (KIND == QK_Q4_1) return uvec4(w[i], w[i + 1u], w[i + 2u], w[i + 3u]);
  const uvec4 lo = uvec4(w[i], w[i + 1u], w[i + 2u], w[i + 3u]);
  // The fifth word holds the last two bytes where the offset is 2 mod 4 (always inside the chunk's
  // own block); where it is 0 mod 4 the fourth is read again, never a word past the chunk.
  const uvec4 hi = uvec4(lo.yzw, w[i + 3u + ((off >> 1) & 1u)]);
  return (off & 2u) == 0u ? lo : (lo >> 16) | (hi << 16);
}

// 16-byte chunks per row.
uint chunks_per_row(uint k) { return KIND == QK_Q8_0 ? k / 16u : k / 32u; }

// The activation index of chunk c's first value (x0) and of its high nibbles' first (x1; Q8_0 has
// none): each is a run of 16 values.
void chunk_values(uint c, out uint x0, out uint x1) {
  if (KIND == QK_Q4_0 || KIND == QK_Q4_1) {
    x0 = 32u * c;  // the block's low nibbles are its values 0-15, the high ones 16-31
    x1 = x0 + 16u;
  } else if (KIND == QK_Q8_0) {
    x0 = 16u * c;
    x1 = x0;
  } else if (KIND == QK_Q4_K || KIND == QK_Q5_K) {
    // Chunk ci of the super-block: words 4ci .. 4ci + 3 of qs, group g = ci / 2 (64 values: low
    // nibbles 64g + l, high 64g + 32 + l), l = 16 (ci & 1) + 0 .. 15.
    const uint ci = c & 7u;
    x0 = (c >> 3) * 256u + 64u * (ci >> 1) + 16u * (ci & 1u);
    x1 = x0 + 32u;
  } else {  // Q6_K: half h = ci / 4, parity r = (ci / 2) & 1: values 128h + 32r + 16 (ci & 1) + l (low), + 64 (high)
    const uint ci = c & 7u;
    x0 = (c >> 3) * 256u + 128u * (ci >> 2) + 32u * ((ci >> 1) & 1u) + 16u * (ci & 1u);
    x1 = x0 + 64u;
  }
}

// A run of 16 consecutive activations as a chunk's dot takes them: their F32 values (v), or on the
// int8 route their codes (q, 16 bytes), their block's scale d and the codes' sum s.
struct Run {
  vec4 v[4];
  uvec4 q;
  float d;
  int s;
  bool exact;  // v holds the values: the F32 route (the F32 kernel, or a non-finite activation)
};

// The run from activation index x (a multiple of 16): its int8 codes where `codes`, else its values.
// No branch on data: the loads of a batch stay in one block, free to be issued together.
Run load_run(uint x, bool codes) {
  Run r;
  r.exact = !codes;
#ifdef KERNEL_GEMV_QUANT_Q8
  if (codes) {
    r.d = uintBitsToFloat(q8[TS_Q8_SCALES_AT(p.k) + x / 32u]);
    r.q = q8v[x / 16u];
    r.s = int(q8[TS_Q8_SUMS_AT(p.k) + x / 16u]);
    return r;
  }
#endif
  for (uint j = 0u; j < 4u; ++j) r.v[j] = x4(x + 4u * j);
  return r;
}

// sum_j (bytes of w[j] - bias) . the run's values j, over a chunk's four words (bias a whole number).
float dot16(uvec4 w, float bias, Run r) {
#ifdef KERNEL_GEMV_QUANT_Q8
  if (!r.exact) {
    // sum q (w - bias) = sum q w - bias sum q, every term an integer: exact in int32.
    const int acc = sudot4(r.q.x, w.x, 0) + sudot4(r.q.y, w.y, 0) + sudot4(r.q.z, w.z, 0) + sudot4(r.q.w, w.w, 0);
    return r.d * float(acc - int(bias) * r.s);
  }
#endif
  return dot(bytes4(w.x, bias), r.v[0]) + dot(bytes4(w.y, bias), r.v[1]) + dot(bytes4(w.z, bias), r.v[2]) +
         dot(bytes4(w.w, bias), r.v[3]);
}

// The sum of the run's 16 activations.
float sum16(Run r) {
#ifdef KERNEL_GEMV_QUANT_Q8
  if (!r.exact) return r.d * float(r.s);
#endif
  return dot(r.v[0] + r.v[1] + r.v[2] + r.v[3], vec4(1.0));
}

// Chunk c of the row starting at byte `row` against its activations v0 (x0 ..) and v1 (x1 ..).
float chunk_dot(uint row, uint c, Run v0, Run v1) {
  if (KIND == QK_Q4_0 || KIND == QK_Q4_1) {
    const bool one = KIND == QK_Q4_1;
    const uint base = row + c * (one ? 20u : 18u);
    const uvec4 q = chunk16(base + (one ? 4u : 2u));
    const float bias = one ? 0.0 : 8.0;
    const float dot_ = dot16(q & 0x0f0f0f0fu, bias, v0) + dot16((q >> 4) & 0x0f0f0f0fu, bias, v1);
    if (one) return fma(qhalf(base), dot_, qhalf(base + 2u) * (sum16(v0) + sum16(v1)));
    return qhalf(base) * dot_;
  } else if (KIND == QK_Q8_0) {
    const uint base = row + (c >> 1) * 34u;
    const uvec4 q = chunk16(base + 2u + 16u * (c & 1u)) ^ 0x80808080u;  // each byte: its int8 value + 128
    return qhalf(base) * dot16(q, 128.0, v0);
  } else if (KIND == QK_Q4_K || KIND == QK_Q5_K) {
    const bool five = KIND == QK_Q5_K;
    const uint base = row + (c >> 3) * (five ? 176u : 144u), ci = c & 7u, g = ci >> 1;
    // The header (d, dmin, 12 scale bytes): one 16-byte load, alike for the super-block's 8 chunks.
    const uvec4 hdr = w4[base >> 4];
    const uvec4 q = chunk16(base + (five ? 48u : 16u) + 16u * ci);
    uvec4 lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;
    if (five) {  // bit 2g (low) / 2g + 1 (high) of each qh byte is the value's fifth bit
      const uvec4 h = chunk16(base + 16u + 16u * (ci & 1u));
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
    const float sums = sc.x * dot16(lo, 0.0, v0) + sc.y * dot16(hi, 0.0, v1);
    const float mins = mn.x * sum16(v0) + mn.y * sum16(v1);
    return dm.x * sums - dm.y * mins;
  } else {  // Q6_K {ql[128], qh[64], scales[16] int8, d}
    const uint base = row + (c >> 3) * 210u, ci = c & 7u, h = ci >> 2, r = (ci >> 1) & 1u, l = 16u * (ci & 1u);
    const uvec4 ql = chunk16(base + 64u * h + 32u * r + l);
    const uvec4 qh = chunk16(base + 128u + 32u * h + l);
    const uvec4 lo = (ql & 0x0f0f0f0fu) | (((qh >> (2u * r)) & 0x03030303u) << 4);
    const uvec4 hi = ((ql >> 4) & 0x0f0f0f0fu) | (((qh >> (2u * r + 4u)) & 0x03030303u) << 4);
    const uint sc = base + 192u + 8u * h + 2u * r + (ci & 1u);  // scale 8h + l / 16 + 2i, i = r and r + 2
    const float s0 = fq(qbyte(sc) ^ 0x80u, 128.0), s1 = fq(qbyte(sc + 4u) ^ 0x80u, 128.0);  // int8 scales
    return qhalf(base + 208u) * (s0 * dot16(lo, 32.0, v0) + s1 * dot16(hi, 32.0, v1));
  }
}

// Chunk c of the NR rows at byte offsets row[] added into acc[].
void add_chunk(uint c, uint row[MAX_NR], inout float acc[MAX_NR], bool codes) {
  uint x0, x1;
  chunk_values(c, x0, x1);
  const Run v0 = load_run(x0, codes);
  Run v1 = v0;  // Q8_0's chunk is one run
  if (KIND != QK_Q8_0) v1 = load_run(x1, codes);
  // The NR rows' loads are independent of one another and unconditional: all in flight together.
  for (uint r = 0u; r < NR; ++r) acc[r] += chunk_dot(row[r], c, v0, v1);
}

// Rows [j0, j0 + NR) at byte offsets, a row past n as row n - 1 again (its sum is discarded).
void row_offsets(uint j0, uint row_bytes, out uint row[MAX_NR], out float acc[MAX_NR]) {
  for (uint r = 0u; r < NR; ++r) {
    row[r] = min(j0 + r, p.n - 1u) * row_bytes;
    acc[r] = 0.0;
  }
}

#ifdef USE_SUBGROUP
// Mode 1: subgroup s of group g owns row blocks (g * subgroups + s) * NR, striding over the grid.
void rows_per_subgroup(uint row_bytes, uint chunks, bool codes) {
  const uint lane = gl_SubgroupInvocationID, lanes = gl_SubgroupSize;
  const uint stride = gl_NumWorkGroups.x * gl_NumSubgroups * NR;
  for (uint j0 = (gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID) * NR; j0 < p.n; j0 += stride) {
    uint row[MAX_NR];
    float acc[MAX_NR];
    row_offsets(j0, row_bytes, row, acc);
    for (uint c0 = lane; c0 < chunks; c0 += UNROLL * lanes) {
      // A batch's chunks past the row read its last chunk again into a sum that is dropped (a
      // select, not a product: 0 x Inf would be NaN): no branch splits the batch's loads.
      for (uint u = 0u; u < UNROLL; ++u) {
        const uint c = c0 + u * lanes;
        float one[MAX_NR];
        for (uint r = 0u; r < NR; ++r) one[r] = 0.0;
        add_chunk(min(c, chunks - 1u), row, one, codes);
        for (uint r = 0u; r < NR; ++r) acc[r] += c < chunks ? one[r] : 0.0;
      }
    }
    for (uint r = 0u; r < NR; ++r) {
      const float v = subgroupAdd(acc[r]);
      if (subgroupElect() && j0 + r < p.n) o[p.n_off + j0 + r] = st(v);
    }
  }
}
#endif

// Mode 0: the work group's invocations take turns along its NR rows, then meet in shared memory.
void rows_per_group(uint row_bytes, uint chunks, bool codes) {
  const uint t = gl_LocalInvocationIndex;
#ifdef USE_SUBGROUP
  const uint slot = gl_SubgroupID, nslots = gl_NumSubgroups;
#else
  const uint slot = t, nslots = WG;
#endif
  for (uint j0 = gl_WorkGroupID.x * NR; j0 < p.n; j0 += gl_NumWorkGroups.x * NR) {
    const uint rows = min(NR, p.n - j0);
    uint row[MAX_NR];
    float acc[MAX_NR];
    row_offsets(j0, row_bytes, row, acc);
    for (uint c = t; c < chunks; c += WG) add_chunk(c, row, acc, codes);
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

void main() {
  const uint row_bytes = quant_row_bytes(KIND, p.k), chunks = chunks_per_row(p.k);
#ifdef KERNEL_GEMV_QUANT_Q8
  // Uniform over the dispatch: every invocation reads the same words, written before this dispatch.
  bool codes = true;
  for (uint g = 0u; g < TS_Q8_GROUPS(p.k); ++g) codes = codes && q8[TS_Q8_FLAGS_AT(p.k) + g] == 0u;
#else
  const bool codes = false;
#endif
#ifdef USE_SUBGROUP
  if (MODE == 1u) {
    rows_per_subgroup(row_bytes, chunks, codes);
    return;
  }
#endif
  rows_per_group(row_bytes, chunks, codes);
}
