#version 450
#extension GL_GOOGLE_include_directive : require
// The device's own roofs (core/device_roofs.h), one kernel per -D:
//   KERNEL_ROOF_READ     part[part_off + lane] = the wrapping sum of the uvec4s lane reads of x
//   KERNEL_ROOF_COPY     y = x, uvec4 at a time
//   KERNEL_ROOF_FMA_F32  out[lane] = the sum of 32 F32 chains acc = fma(acc, mul, add), 8 vec4s
//   KERNEL_ROOF_FMA_F16  the same in F16, 16 f16vec2s (packed: a GPU's F16 FMA rate is the paired one)
// The streams are grid-stride loops over 16-byte vectors, so each subgroup reads whole contiguous
// lines, with four loads issued before the first is used: the bytes in flight a GPU needs to reach
// its memory's rate. The FMA chains are independent (no chain waits on another) and take mul / add
// from push constants, so no compiler can fold or shorten them.
#ifdef KERNEL_ROOF_FMA_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

layout(local_size_x = 256, local_size_x_id = 0) in;

#if defined(KERNEL_ROOF_READ) || defined(KERNEL_ROOF_COPY)
layout(std430, binding = 0) readonly buffer Buf0 { uvec4 x[]; };
#ifdef KERNEL_ROOF_READ
layout(std430, binding = 1) writeonly buffer Buf1 { uint part[]; };
#else
layout(std430, binding = 1) writeonly buffer Buf1 { uvec4 y[]; };
#endif
layout(push_constant) uniform Push { uint n, part_off; } p;  // n: uvec4s in this window

void main() {
  const uint lane = gl_GlobalInvocationID.x, lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint i = lane;
#ifdef KERNEL_ROOF_READ
  uvec4 s0 = uvec4(0), s1 = uvec4(0), s2 = uvec4(0), s3 = uvec4(0);
  for (; i + 3u * lanes < p.n; i += 4u * lanes) {
    s0 += x[i];
    s1 += x[i + lanes];
    s2 += x[i + 2u * lanes];
    s3 += x[i + 3u * lanes];
  }
  for (; i < p.n; i += lanes) s0 += x[i];
  const uvec4 s = s0 + s1 + s2 + s3;
  part[p.part_off + lane] = s.x + s.y + s.z + s.w;
#else
  for (; i + 3u * lanes < p.n; i += 4u * lanes) {
    const uvec4 a = x[i], b = x[i + lanes], c = x[i + 2u * lanes], d = x[i + 3u * lanes];
    y[i] = a;
    y[i + lanes] = b;
    y[i + 2u * lanes] = c;
    y[i + 3u * lanes] = d;
  }
  for (; i < p.n; i += lanes) y[i] = x[i];
#endif
}

#else  // the FMA roofs
layout(std430, binding = 0) writeonly buffer Buf0 { float out_[]; };
layout(push_constant) uniform Push { uint rounds; float mul, add; } p;

#ifdef KERNEL_ROOF_FMA_F16
#define VEC f16vec2
#define SCALAR float16_t
#define NV 16
#else
#define VEC vec4
#define SCALAR float
#define NV 8
#endif

void main() {
  // Chain c (of 32) starts at -c / 4 (core/device_roofs.cpp: fma_chain_start), lane-independent.
  VEC acc[NV];
  const uint width = 32u / NV;
  for (uint v = 0u; v < NV; ++v)
    for (uint e = 0u; e < width; ++e) acc[v][e] = SCALAR(-0.25 * float(v * width + e));
  const VEC m = VEC(SCALAR(p.mul)), a = VEC(SCALAR(p.add));
  for (uint r = 0u; r < p.rounds; ++r)
    for (uint v = 0u; v < NV; ++v) acc[v] = fma(acc[v], m, a);
  float s = 0.0;
  for (uint v = 0u; v < NV; ++v)
    for (uint e = 0u; e < width; ++e) s += float(acc[v][e]);
  out_[gl_GlobalInvocationID.x] = s;
}
#endif
