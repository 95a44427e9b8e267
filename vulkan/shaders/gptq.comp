#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_gptq and gemm_awq: out[i, j] = sum_k a[i, k] * W[k, j], W[k, j] = scale[g, j] * (q[k, j] -
// zero[g, j]), the bit positions of core/quant/packing.h. g is g_idx[k] under act-order, else
// k / group_size; the scale and zero are reloaded only when g changes. Invocation x of a work group
// takes output column j (neighbouring invocations read neighbouring words of qweight: GPTQ packs
// along k, so the columns of one int32 row are adjacent; AWQ's eight columns of a word share it),
// decodes W[k, j] once per k in registers and uses it for up to MR activation rows.
//   KS = 1 (prefill): work-group y strides over blocks of MR rows; each invocation walks all of k.
//   KS > 1 (decode, m <= MR): the KS rows of invocations (y) split k into KS contiguous slices (whole
//   groups without act-order) so that a decode's few columns still keep a GPU's memory busy (one
//   invocation per column walking all of k ran a 4096 x 4096 decode at 10 GB/s on an H100); the
//   slices' sums meet in shared memory and invocation y = 0 adds them in slice order (deterministic).
//   Without act-order GPTQ reads each qweight word once for its 32 / BITS codes.
//   AWQ with KS > 1 (main_awq_split): invocation x takes one word column (AWQ packs a k row's eight
//   neighbouring columns into one word) instead of one column, so every qweight word is loaded once,
//   four k rows' words before any is used, for its eight columns (the per-column walk loads each word
//   eight times, once per column, one at a time).
//   Act-order GPTQ with KS > 1: every group's scale and zero for the work group's columns staged in
//   shared memory once (ACT_STAGE entries), then the word walk, each code's g = g_idx[k] looked up
//   there (the per-k walk reloads a scale and a zero from global memory at nearly every k, since
//   act-order visits the groups in a random order).
// Specialization constants: 0 the work-group width (columns; AWQ decode: word columns), 1 AWQ (else
// GPTQ), 2 bits, 3 act-order, 4 KS, 5 ACT_STAGE (groups x columns, or 1: not staged).
#include "dtype.glsl"

#define MR 8u

layout(local_size_x = 64, local_size_x_id = 0, local_size_y = 1, local_size_y_id = 4) in;
layout(constant_id = 1) const bool AWQ = false;
layout(constant_id = 2) const uint BITS = 4;
layout(constant_id = 3) const bool ACT_ORDER = false;
layout(constant_id = 5) const uint ACT_STAGE = 1u;

BUF_IN(0, a)
layout(std430, binding = 1) readonly buffer Buf1 { uint qweight[]; };
layout(std430, binding = 2) readonly buffer Buf2 { uint qzeros[]; };
layout(std430, binding = 3) readonly buffer Buf3 { uint scales[]; };  // F16 [G, n], two per word
BUF_OUT(4, o)
layout(std430, binding = 5) readonly buffer Buf5 { uint g_idx[]; };   // act-order only
layout(std430, binding = 7) readonly buffer Buf7 { uvec4 g_idx4[]; };  // the same, four a load
#ifdef DT_F32
// The activations again, 16 bytes at a time: a qweight word's codes run over 32 / BITS (8 or 4)
// consecutive k from a multiple of them.
layout(std430, binding = 6) readonly buffer Buf6 { vec4 a4[]; };
#endif
layout(push_constant) uniform Push { uint m, n, k, group_size; } p;

#include "act4.glsl"
#include "codes.glsl"

const uint kAwqSlot[8] = uint[8](0u, 4u, 1u, 5u, 2u, 6u, 3u, 7u);

uint field(uint word, uint shift, uint bits) { return (word >> shift) & ((1u << bits) - 1u); }

uint weight_code(uint kk, uint j) {
  if (AWQ) return field(qweight[kk * (p.n / 8u) + j / 8u], 4u * kAwqSlot[j % 8u], 4u);
  const uint per = 32u / BITS;
  return field(qweight[(kk / per) * p.n + j], BITS * (kk % per), BITS);
}

// GPTQ stores its zeros minus one.
uint zero_code(uint g, uint j) {
  if (AWQ) return field(qzeros[g * (p.n / 8u) + j / 8u], 4u * kAwqSlot[j % 8u], 4u);
  const uint per = 32u / BITS;
  return field(qzeros[g * (p.n / per) + j / per], BITS * (j % per), BITS) + 1u;
}
float zero_of(uint g, uint j) { return float(zero_code(g, j)); }

// The F16 bits of scale[g, j].
uint scale_bits(uint g, uint j) {
  const uint e = g * p.n + j;
  return (scales[e >> 1] >> ((e & 1u) * 16u)) & 0xffffu;
}
float scale_of(uint g, uint j) { return unpackHalf2x16(scale_bits(g, j)).x; }

// acc[i] += a[m0 + i, kk] * W[kk, j] for kk in [k0, k1): the walk both layouts share.
void accumulate(uint m0, uint j, uint k0, uint k1, inout float acc[MR]) {
  uint g_cur = 0xffffffffu;
  float s = 0.0, z = 0.0;
  for (uint kk = k0; kk < k1; ++kk) {
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
}

// acc[i] += a[i, kk] * s (q - z) for the 32 / BITS codes q of qweight word w (kk = w * per ..), q - z
// exact (codes.glsl). Each weight is scaled before its products, as the reference does: an infinite
// scale then makes the column NaN where some q == z, where a group's scaled sum would give +-Inf
// (docs/catalog.md, "Special values"). The activations four at a time: one load a row for four
// codes, where one a code left the loop bound by its loads.
// add_codes4 takes codes e .. e + 3 of the word, code c with scale s[c] and zero z[c] (the act-order
// walk's, one group a code); add_word all of them with one group's.
void add_codes4(uint word, uint w, uint e, vec4 s, vec4 z, inout float acc[MR]) {
  vec4 d;
  for (uint c = 0u; c < 4u; ++c) d[c] = s[c] * fq(field(word, BITS * (e + c), BITS), z[c]);
  for (uint i = 0u; i < MR; ++i) {
    if (i >= p.m) break;
    const vec4 av = x4(i * p.k + w * (32u / BITS) + e);
    acc[i] = fma(av.w, d.w, fma(av.z, d.z, fma(av.y, d.y, fma(av.x, d.x, acc[i]))));
  }
}
void add_word(uint word, uint w, float s, float z, inout float acc[MR]) {
  for (uint e = 0u; e < 32u / BITS; e += 4u) add_codes4(word, w, e, vec4(s), vec4(z), acc);
}

// GPTQ without act-order, groups of whole qweight words, k0 and k1 on group boundaries: each
// qweight word is read once and its codes decoded from a register (the per-k walk above reads it
// 32 / BITS times), four words loaded before any is used so that four loads are in flight per
// invocation.
void accumulate_words(uint j, uint k0, uint k1, inout float acc[MR]) {
  const uint per = 32u / BITS, words = p.group_size / per;
  for (uint g = k0 / p.group_size; g < k1 / p.group_size; ++g) {
    const float s = scale_of(g, j), z = zero_of(g, j);
    const uint w0 = g * words, w1 = w0 + words;
    uint w = w0;
    for (; w + 4u <= w1; w += 4u) {
      const uvec4 q = uvec4(qweight[w * p.n + j], qweight[(w + 1u) * p.n + j], qweight[(w + 2u) * p.n + j],
                            qweight[(w + 3u) * p.n + j]);
      add_word(q.x, w, s, z, acc);
      add_word(q.y, w + 1u, s, z, acc);
      add_word(q.z, w + 2u, s, z, acc);
      add_word(q.w, w + 3u, s, z, acc);
    }
    for (; w < w1; ++w) add_word(qweight[w * p.n + j], w, s, z, acc);
  }
}

#define KS gl_WorkGroupSize.y
// One row's sums of the work group: one a invocation (at most kMaxWorkGroup, 256), eight an
// invocation in main_awq_split.
shared float red[8u * 256u];
// Act-order decode: entry g * width + x holds scale[g, column x]'s F16 bits and, above them, the
// column's zero (at most 2^8 with GPTQ's + 1).
shared uint act_sz[ACT_STAGE];

// Every group's entries for the work group's columns (col0 ..; past n: column n - 1), by all
// invocations, then a barrier: every invocation calls it.
void stage_act(uint col0) {
  const uint wc = gl_WorkGroupSize.x, entries = (p.k / p.group_size) * wc;
  for (uint e = gl_LocalInvocationIndex; e < entries; e += wc * KS) {
    const uint g = e / wc, j = min(col0 + e % wc, p.n - 1u);
    act_sz[e] = scale_bits(g, j) | (zero_code(g, j) << 16);
  }
  barrier();
}

// Act-order, whole qweight words [k0, k1) of column j (staged by stage_act, x = j's place in the
// work group): each word read once, four loaded before any is used, each code's scale and zero
// those of its own group g_idx[k].
void accumulate_act_words(uint j, uint x, uint k0, uint k1, inout float acc[MR]) {
  const uint per = 32u / BITS, wc = gl_WorkGroupSize.x, w1 = k1 / per;
  uint w = k0 / per;
  for (; w < w1; w += 4u) {
    uint q[4];
    for (uint t = 0u; t < 4u; ++t) q[t] = qweight[min(w + t, w1 - 1u) * p.n + j];
    for (uint t = 0u; t < 4u; ++t) {
      if (w + t >= w1) break;
      for (uint e = 0u; e < per; e += 4u) {
        const uvec4 g = g_idx4[((w + t) * per + e) / 4u];  // codes e .. e + 3 start on a multiple of 4
        vec4 s, z;
        for (uint c = 0u; c < 4u; ++c) {
          const uint sz = act_sz[g[c] * wc + x];
          s[c] = unpackHalf2x16(sz & 0xffffu).x;
          z[c] = float(sz >> 16);
        }
        add_codes4(q[t], w + t, e, s, z, acc);
      }
    }
  }
}

// KS > 1: slice y of k, then per row the fixed-order sum over slices. Every invocation reaches the
// barriers (the row count is uniform): a column past n reads column n - 1 and its sums are dropped.
void main_split() {
  const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y, wc = gl_WorkGroupSize.x;
  const uint col = gl_WorkGroupID.x * wc + lx, j = min(col, p.n - 1u);
  // Slices of whole groups (act-order: of whole qweight words, since g may change at any k).
  const uint unit = ACT_ORDER ? 32u / BITS : p.group_size;
  const uint per_slice = ((p.k + unit - 1u) / unit + KS - 1u) / KS * unit;
  const uint k0 = min(ly * per_slice, p.k), k1 = min(k0 + per_slice, p.k);
  float acc[MR];
  for (uint i = 0u; i < MR; ++i) acc[i] = 0.0;
  // The word walk needs groups of whole qweight words; a group that ends inside a word (a checkpoint
  // may have one) takes the per-k walk. Act-order walks words whatever its groups: staged, each code
  // finds its own group's scale and zero.
  if (ACT_ORDER && ACT_STAGE > 1u) {
    stage_act(gl_WorkGroupID.x * wc);
    accumulate_act_words(j, lx, k0, k1, acc);
  } else if (AWQ || ACT_ORDER || p.group_size % (32u / BITS) != 0u) {
    accumulate(0u, j, k0, k1, acc);
  } else {
    accumulate_words(j, k0, k1, acc);
  }
  for (uint i = 0u; i < MR; ++i) {
    if (i >= p.m) break;
    red[ly * wc + lx] = acc[i];
    barrier();  // every slice's sum of row i is in shared memory
    if (ly == 0u && col < p.n) {
      float sum = red[lx];
      for (uint y = 1u; y < KS; ++y) sum += red[y * wc + lx];
      o[i * p.n + j] = st(sum);
    }
    barrier();  // read before the next row overwrites it
  }
}

// AWQ, KS > 1: the eight columns of word column w over slice y of k (whole groups), the rows in
// passes of AWQ_ROWS, each weight s (q - z) scaled before its products as in add_word. Then per row
// the fixed-order sum over slices, as main_split. Every invocation reaches the barriers (the row
// count is uniform): a word column past n / 8 reads the last one and its sums are dropped.
#define AWQ_ROWS 4u
void main_awq_split() {
  const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y, wc = gl_WorkGroupSize.x;
  const uint words = p.n / 8u, w = min(gl_WorkGroupID.x * wc + lx, words - 1u);
  const uint groups = p.k / p.group_size, per_slice = (groups + KS - 1u) / KS;
  const uint g0 = min(ly * per_slice, groups), g1 = min(g0 + per_slice, groups);
  for (uint m0 = 0u; m0 < p.m; m0 += AWQ_ROWS) {
    float acc[AWQ_ROWS][8];
    for (uint i = 0u; i < AWQ_ROWS; ++i)
      for (uint e = 0u; e < 8u; ++e) acc[i][e] = 0.0;
    for (uint g = g0; g < g1; ++g) {
      float s[8], z[8];
      const uint sw = (g * p.n + 8u * w) / 2u, zw = qzeros[g * words + w];  // 8 F16 scales: 4 words
      for (uint c = 0u; c < 4u; ++c) {
        const vec2 h = unpackHalf2x16(scales[sw + c]);
        s[2u * c] = h.x, s[2u * c + 1u] = h.y;
      }
      for (uint e = 0u; e < 8u; ++e) z[e] = float(field(zw, 4u * kAwqSlot[e], 4u));
      const uint k1 = (g + 1u) * p.group_size;
      for (uint kk = g * p.group_size; kk < k1; kk += 4u) {
        const uint t_end = min(4u, k1 - kk);
        uint q[4];
        for (uint t = 0u; t < 4u; ++t) q[t] = qweight[min(kk + t, k1 - 1u) * words + w];
        for (uint t = 0u; t < t_end; ++t) {
          float d[8];
          for (uint e = 0u; e < 8u; ++e) d[e] = s[e] * fq(field(q[t], 4u * kAwqSlot[e], 4u), z[e]);
          for (uint i = 0u; i < AWQ_ROWS; ++i) {
            if (m0 + i >= p.m) break;
            const float av = ld(a[(m0 + i) * p.k + kk + t]);
            for (uint e = 0u; e < 8u; ++e) acc[i][e] = fma(av, d[e], acc[i][e]);
          }
        }
      }
    }
    for (uint i = 0u; i < AWQ_ROWS; ++i) {
      if (m0 + i >= p.m) break;  // uniform: every invocation leaves together
      for (uint e = 0u; e < 8u; ++e) red[(ly * wc + lx) * 8u + e] = acc[i][e];
      barrier();  // every slice's sums of row m0 + i are in shared memory
      const uint t = ly * wc + lx, col = gl_WorkGroupID.x * wc * 8u + t;  // invocation t sums column t
      if (t < wc * 8u && col < p.n) {
        float sum = red[t];
        for (uint y = 1u; y < KS; ++y) sum += red[y * wc * 8u + t];
        o[(m0 + i) * p.n + col] = st(sum);
      }
      barrier();  // read before the next row overwrites it
    }
  }
}

void main() {
  if (KS > 1u) {
    if (AWQ) main_awq_split();
    else main_split();
    return;
  }
  const uint j = gl_GlobalInvocationID.x;
  if (j >= p.n) return;  // no barriers on this path, so leaving early is safe
  for (uint m0 = gl_WorkGroupID.y * MR; m0 < p.m; m0 += gl_NumWorkGroups.y * MR) {
    float acc[MR];
    for (uint i = 0u; i < MR; ++i) acc[i] = 0.0;
    accumulate(m0, j, 0u, p.k, acc);
    for (uint i = 0u; i < MR; ++i)
      if (m0 + i < p.m) o[(m0 + i) * p.n + j] = st(acc[i]);
  }
}
