#version 450
#extension GL_GOOGLE_include_directive : require
// Element-wise ops over a [rows, cols] grid: work groups stride over rows in y and over column
// chunks in x (coalesced, and no integer division per element):
//   KERNEL_EW_GELU         out = 0.5 x erfc(-x / sqrt 2)          (the erf form, without cancellation)
//   KERNEL_EW_ADD          dst += src
//   KERNEL_EW_SCALED_ADD   dst += f * src
//   KERNEL_EW_ADD_BIAS     dst[r, c] += src[c]
//   KERNEL_EW_SILU_MUL     out[b + r, c] = silu(g) * u with g, u = src[a + r, c], src[a + r, cols + c]
//                          (a, b: input / output row offsets; input rows are 2 cols wide)
#include "dtype.glsl"

#define WG 256
layout(local_size_x = WG) in;
layout(push_constant) uniform Push { uint rows, cols, a, b; float f; } p;

#if defined(KERNEL_EW_GELU) || defined(KERNEL_EW_SILU_MUL)
BUF_IN(0, src)
BUF_OUT(1, dst)
#else
BUF_INOUT(0, dst)
BUF_IN(1, src)
#endif

// erfc with relative error below 1.2e-7 for every x (a Chebyshev fit of erfc(z) exp(z^2)).
float erfc_(float x) {
  const float z = abs(x);
  const float t = 1.0 / (1.0 + 0.5 * z);
  const float r = t * exp(-z * z - 1.26551223 +
      t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
      t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? r : 2.0 - r;
}

void main() {
  const uint cstride = gl_NumWorkGroups.x * WG;
  for (uint r = gl_WorkGroupID.y; r < p.rows; r += gl_NumWorkGroups.y) {
    for (uint c = gl_WorkGroupID.x * WG + gl_LocalInvocationIndex; c < p.cols; c += cstride) {
      const uint i = r * p.cols + c;
#if defined(KERNEL_EW_GELU)
      const float x = ld(src[i]);
      dst[i] = st(0.5 * x * erfc_(-x * 0.70710678118654752));
#elif defined(KERNEL_EW_ADD)
      dst[i] = st(ld(dst[i]) + ld(src[i]));
#elif defined(KERNEL_EW_SCALED_ADD)
      dst[i] = st(fma(p.f, ld(src[i]), ld(dst[i])));
#elif defined(KERNEL_EW_ADD_BIAS)
      dst[i] = st(ld(dst[i]) + ld(src[c]));
#elif defined(KERNEL_EW_SILU_MUL)
      const uint in_row = (p.a + r) * 2u * p.cols;
      const float g = ld(src[in_row + c]), u = ld(src[in_row + p.cols + c]);
      dst[(p.b + r) * p.cols + c] = st(g / (1.0 + exp(-g)) * u);
#endif
    }
  }
}
