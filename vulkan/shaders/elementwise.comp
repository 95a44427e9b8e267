#version 450
#extension GL_GOOGLE_include_directive : require
// Element-wise ops over a [rows, cols] grid: work groups stride over rows in y and over column
// chunks in x (coalesced, and no integer division per element):
//   KERNEL_EW_GELU         out = x Phi(x)                         (the erf form; Phi in math.glsl)
//   KERNEL_EW_ADD          dst += src
//   KERNEL_EW_SCALED_ADD   dst += f * src
//   KERNEL_EW_ADD_BIAS     dst[r, c] += src[c]
//   KERNEL_EW_SILU_MUL     out[b + r, c] = silu(g) * u with g, u = src[a + r, c], src[a + r, cols + c]
//                          (a, b: input / output row offsets; input rows are 2 cols wide)
//   KERNEL_EW_SILU_MUL_PAIR  out = silu(gate) * up, gate and up separate tensors (MoE slots)
//   KERNEL_EW_WSUM         out[b + r*cols + c] = sum_j w[a + r*k + j] * src[(r*k + j)*cols + c]
//   KERNEL_EW_WSUM_ADD     the same added to out (a residual): the MoE weighted sums, F32 weights
//   KERNEL_EW_SILU         out = silu(x)
//   KERNEL_EW_BCAST_ADD    out[r, c] = x[r, c] + y[(r / d1) s0 + (r % d1) s1 + c s2]: add / mul with y
//   KERNEL_EW_BCAST_MUL    broadcast (core/ops/tensor/broadcast.h's strides); rows r = (i0, i1)
#include "dtype.glsl"
#include "math.glsl"

// The work-group size is specialization constant 0, which the planner sets (vulkan/dense/elementwise.cpp: kWg;
// 256 when unset). Any size is correct: the loops stride by the grid.
layout(local_size_x = 256, local_size_x_id = 0) in;
#define WG gl_WorkGroupSize.x
#if defined(KERNEL_EW_BCAST_ADD) || defined(KERNEL_EW_BCAST_MUL)
layout(push_constant) uniform Push { uint rows, cols, d1, s0, s1, s2; } p;
#else
layout(push_constant) uniform Push { uint rows, cols, a, b; float f; uint k; } p;  // k: WSUM's terms
#endif

#if defined(KERNEL_EW_GELU) || defined(KERNEL_EW_SILU_MUL) || defined(KERNEL_EW_SILU)
BUF_IN(0, src)
BUF_OUT(1, dst)
#elif defined(KERNEL_EW_BCAST_ADD) || defined(KERNEL_EW_BCAST_MUL)
BUF_IN(0, src)
BUF_IN(1, src2)
BUF_OUT(2, dst)
#elif defined(KERNEL_EW_SILU_MUL_PAIR)
BUF_IN(0, src)
BUF_OUT(1, dst)
BUF_IN(2, src2)
#elif defined(KERNEL_EW_WSUM) || defined(KERNEL_EW_WSUM_ADD)
BUF_INOUT(0, dst)
BUF_IN(1, src)
layout(std430, binding = 2) readonly buffer Buf2 { float wts[]; };
#else
BUF_INOUT(0, dst)
BUF_IN(1, src)
#endif

void main() {
  const uint cstride = gl_NumWorkGroups.x * WG;
  for (uint r = gl_WorkGroupID.y; r < p.rows; r += gl_NumWorkGroups.y) {
    for (uint c = gl_WorkGroupID.x * WG + gl_LocalInvocationIndex; c < p.cols; c += cstride) {
      const uint i = r * p.cols + c;
#if defined(KERNEL_EW_GELU)
      const float x = ld(src[i]);
      dst[i] = st(x * normal_cdf(x));
#elif defined(KERNEL_EW_ADD)
      dst[i] = st(ld(dst[i]) + ld(src[i]));
#elif defined(KERNEL_EW_SCALED_ADD)
      dst[i] = st(fma(p.f, ld(src[i]), ld(dst[i])));
#elif defined(KERNEL_EW_ADD_BIAS)
      dst[i] = st(ld(dst[i]) + ld(src[c]));
#elif defined(KERNEL_EW_SILU_MUL)
      const uint in_row = (p.a + r) * 2u * p.cols;
      const float g = ld(src[in_row + c]), u = ld(src[in_row + p.cols + c]);
      dst[(p.b + r) * p.cols + c] = st(silu_mul(g, u));
#elif defined(KERNEL_EW_SILU_MUL_PAIR)
      dst[i] = st(silu_mul(ld(src[i]), ld(src2[i])));
#elif defined(KERNEL_EW_SILU)
      dst[i] = st(silu_mul(ld(src[i]), 1.0));  // silu(x) * 1: exact
#elif defined(KERNEL_EW_BCAST_ADD) || defined(KERNEL_EW_BCAST_MUL)
      const float y = ld(src2[(r / p.d1) * p.s0 + (r % p.d1) * p.s1 + c * p.s2]);
#if defined(KERNEL_EW_BCAST_MUL)
      dst[i] = st(ld(src[i]) * y);
#else
      dst[i] = st(ld(src[i]) + y);
#endif
#elif defined(KERNEL_EW_WSUM) || defined(KERNEL_EW_WSUM_ADD)
      float s = 0.0;
      for (uint j = 0u; j < p.k; ++j) s = fma(wts[p.a + r * p.k + j], ld(src[(r * p.k + j) * p.cols + c]), s);
      const uint at = p.b + i;
#if defined(KERNEL_EW_WSUM_ADD)
      s += ld(dst[at]);
#endif
      dst[at] = st(s);
#endif
    }
  }
}
