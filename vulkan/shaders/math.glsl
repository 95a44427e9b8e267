// Transcendentals with error bounds of our own, where GLSL's are too loose for an op's tolerance.
#include "core/approx/normal_cdf.inc"

// e^x to about 1 ulp over the whole F32 range. GLSL's exp may err by 3 + 2|x| ulp (the Vulkan
// spec's bound; lavapipe computes exp2(x * log2 e)): 40 ulp at x = -20, past silu's tolerance.
// Reduction x = n ln2 + r, |r| <= ln2 / 2, with ln2 split so that n * ln2_hi is exact (ln2_hi has 16
// significant bits, |n| <= 151); e^r by its Taylor series to r^7 (truncation below 6e-9 relative);
// then the exponent. x is clamped first: past 89 e^x is inf, below -104 it is 0.
float exp_accurate(float x) {
  const float xc = clamp(x, -104.0, 89.0);
  const float n = round(xc * 1.44269504);
  precise float r = fma(-n, 0.693145751953125, xc);
  r = fma(-n, 1.428606765330187e-06, r);
  precise float e = 1.0 / 5040.0;
  e = fma(e, r, 1.0 / 720.0);
  e = fma(e, r, 1.0 / 120.0);
  e = fma(e, r, 1.0 / 24.0);
  e = fma(e, r, 1.0 / 6.0);
  e = fma(e, r, 0.5);
  e = fma(e, r, 1.0);
  e = fma(e, r, 1.0);
  return isnan(x) ? x : ldexp(e, int(n));
}

// silu(g) * u: the SwiGLU product every silu-mul kernel writes (elementwise.comp, moe_gemv.comp).
// GPUs divide by multiplying with a reciprocal, which flushes to zero once the divisor passes 2^126
// (the Vulkan spec bounds division's error only inside [2^-126, 2^126]): on an NVIDIA H100 g = -88
// gave -0 for silu(g) = -5.3e-37. Below g = -80, 1 + e^-g rounds to e^-g, so silu(g) = g e^g, taken
// as (g e) e with e = e^(g/2): every factor and partial product stays a normal number as long as
// the result does (down to g = -92; below it silu(g) is subnormal in F32, and a GPU may flush it).
// `precise` keeps the compiler from forming e * e (subnormal, flushed) first.
float silu_mul(float g, float u) {
  if (g >= -80.0) return g / (1.0 + exp_accurate(-g)) * u;
  const float e = exp_accurate(0.5 * g);
  precise float s = g * e;
  s = s * e;
  return s * u;
}

// The standard normal CDF by core/approx/normal_cdf.inc (the cpu backend evaluates the same).
float normal_cdf(float x) {
  const float a = abs(x), x2 = x * x;
  if (a <= TS_PHI_SPLIT) {
    precise float p = 0.0;
#define TS_NEAR_STEP(c) p = fma(p, x2, c);
    TS_PHI_NEAR(TS_NEAR_STEP)
#undef TS_NEAR_STEP
    return fma(x, p, 0.5);
  }
  const float inv_a = 1.0 / a, w = inv_a * inv_a;
  precise float q = 0.0;
#define TS_FAR_STEP(c) q = fma(q, w, c);
  TS_PHI_FAR(TS_FAR_STEP)
#undef TS_FAR_STEP
  const float tail = exp_accurate(-0.5 * x2) * inv_a * q;
  return x < 0.0 ? tail : 1.0 - tail;
}
