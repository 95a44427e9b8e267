#version 450
#extension GL_GOOGLE_include_directive : require
// Row norms, one work group per row of `dim` (rows beyond the group count loop):
//   KERNEL_NORMS_RMS       out = x / sqrt(mean(x^2) + eps) * w
//   KERNEL_NORMS_ADD_RMS   residual += x; out = rms_norm(residual) (of the stored, rounded residual)
//   KERNEL_NORMS_LAYER     out = (x - mean) / sqrt(var + eps) * gamma + beta (biased var, two passes)
#include "dtype.glsl"

#define WG 256
#include "reduce.glsl"

layout(local_size_x = WG) in;
layout(push_constant) uniform Push { uint tokens, dim; float eps; } p;

#if defined(KERNEL_NORMS_RMS)
BUF_IN(0, x)
BUF_IN(1, w)
BUF_OUT(2, o)
#elif defined(KERNEL_NORMS_ADD_RMS)
BUF_INOUT(0, res)
BUF_IN(1, x)
BUF_IN(2, w)
BUF_OUT(3, o)
#elif defined(KERNEL_NORMS_LAYER)
BUF_IN(0, x)
BUF_IN(1, gamma)
BUF_IN(2, beta)
BUF_OUT(3, o)
#endif

void main() {
  const uint t = gl_LocalInvocationIndex;
  for (uint row = gl_WorkGroupID.x; row < p.tokens; row += gl_NumWorkGroups.x) {
    const uint base = row * p.dim;
#if defined(KERNEL_NORMS_LAYER)
    float s = 0.0;
    for (uint i = t; i < p.dim; i += WG) s += ld(x[base + i]);
    const float mean = wg_sum(s) / float(p.dim);
    float v = 0.0;
    for (uint i = t; i < p.dim; i += WG) {
      const float d = ld(x[base + i]) - mean;
      v = fma(d, d, v);
    }
    const float inv = inversesqrt(wg_sum(v) / float(p.dim) + p.eps);
    for (uint i = t; i < p.dim; i += WG)
      o[base + i] = st(fma((ld(x[base + i]) - mean) * inv, ld(gamma[i]), ld(beta[i])));
#else
    float ss = 0.0;
    for (uint i = t; i < p.dim; i += WG) {
#if defined(KERNEL_NORMS_ADD_RMS)
      res[base + i] = st(ld(res[base + i]) + ld(x[base + i]));
      const float r = ld(res[base + i]);  // this invocation's own write: the rounded sum
#else
      const float r = ld(x[base + i]);
#endif
      ss = fma(r, r, ss);
    }
    const float inv = 1.0 / sqrt(wg_sum(ss) / float(p.dim) + p.eps);
    for (uint i = t; i < p.dim; i += WG) {
#if defined(KERNEL_NORMS_ADD_RMS)
      const float r = ld(res[base + i]);
#else
      const float r = ld(x[base + i]);
#endif
      o[base + i] = st(r * inv * ld(w[i]));
    }
#endif
  }
}
