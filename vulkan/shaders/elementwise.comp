#version 450
#extension GL_GOOGLE_include_directive : require
// Element-wise ops over n elements (grid-stride, coalesced):
//   KERNEL_EW_GELU         out = 0.5 x erfc(-x / sqrt 2)          (the erf form, without cancellation)
//   KERNEL_EW_ADD          dst += src
//   KERNEL_EW_SCALED_ADD   dst += f * src
//   KERNEL_EW_ADD_BIAS     dst[r, c] += src[c]                   (a = cols)
//   KERNEL_EW_SILU_MUL     out[c_row + t, i] = silu(g) * u, g, u = src[b_row + t, i], src[b_row + t, a + i]
//                          (a = intermediate, b, c = input / output row offsets)
#include "dtype.glsl"

#define WG 256
layout(local_size_x = WG) in;
layout(push_constant) uniform Push { uint n, a, b, c; float f; } p;

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
  const uint stride = gl_NumWorkGroups.x * WG;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
#if defined(KERNEL_EW_GELU)
    const float x = ld(src[i]);
    dst[i] = st(0.5 * x * erfc_(-x * 0.70710678118654752));
#elif defined(KERNEL_EW_ADD)
    dst[i] = st(ld(dst[i]) + ld(src[i]));
#elif defined(KERNEL_EW_SCALED_ADD)
    dst[i] = st(fma(p.f, ld(src[i]), ld(dst[i])));
#elif defined(KERNEL_EW_ADD_BIAS)
    dst[i] = st(ld(dst[i]) + ld(src[i % p.a]));
#elif defined(KERNEL_EW_SILU_MUL)
    const uint t = i / p.a, c = i % p.a;
    const uint in_row = (p.b + t) * 2u * p.a;
    const float g = ld(src[in_row + c]), u = ld(src[in_row + p.a + c]);
    dst[(p.c + t) * p.a + c] = st(g / (1.0 + exp(-g)) * u);
#endif
  }
}
