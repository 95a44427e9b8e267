#!/usr/bin/env python3
"""Makes core/approx/normal_cdf.inc, the coefficients with which the backends' GELU kernels evaluate
the standard normal CDF in F32, and checks that evaluation against the op's tolerance. Needs mpmath
(Debian: python3-mpmath). From the repository root:
  core/approx/normal_cdf_fit.py > core/approx/normal_cdf.inc

GELU(x) = x * Phi(x), Phi the standard normal CDF, split at |x| = 2:
  near: Phi(x)    = 1/2 + x * P(x^2),                   P(u) ~ (Phi(sqrt u) - 1/2) / sqrt u on [0, 4]
  far:  Phi(-|x|) = exp(-x^2 / 2) / |x| * R(1 / x^2),   R(w) ~ Phi(-a) a exp(a^2 / 2), a = 1/sqrt w,
                                                        on [0, 1/4]
Both are Chebyshev least-squares fits (near-minimax), printed highest degree first and rounded to F32.
The check replays the kernel's F32 arithmetic (one rounding per fused multiply-add) on random inputs
and prints the worst error as a fraction of the tolerance in core/ops/core/gelu.cpp.
"""
import math
import random
import struct

import mpmath as mp

mp.mp.dps = 40
SPLIT = 2.0
P_DEGREE, R_DEGREE = 8, 10


def f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def near(u):
    if u == 0:
        return 1 / mp.sqrt(2 * mp.pi)
    s = mp.sqrt(u)
    return (mp.ncdf(s) - mp.mpf(1) / 2) / s


def far(w):
    if w == 0:
        return 1 / mp.sqrt(2 * mp.pi)
    a = 1 / mp.sqrt(w)
    return mp.ncdf(-a) * a * mp.exp(a * a / 2)


def horner(c, x):
    r = c[0]
    for k in c[1:]:
        r = f32(r * x + k)
    return r


def gelu_f32(x, P, R):
    a = abs(x)
    x2 = f32(x * x)
    if a <= SPLIT:
        return f32(x * f32(x * horner(P, x2) + 0.5))
    inv_a = f32(1 / a)
    e = f32(math.exp(max(f32(x2 * -0.5), -104.0)))
    tail = f32(f32(e * inv_a) * horner(R, f32(inv_a * inv_a)))
    return f32(x * (tail if x < 0 else f32(1 - tail)))


HEADER = """// Made by core/approx/normal_cdf_fit.py; do not edit. The standard normal CDF Phi, as the backends'
// GELU kernels (x * Phi(x)) evaluate it in F32, shared by C++ (cpu) and GLSL (vulkan):
//   |x| <= TS_PHI_SPLIT:  Phi(x)    = 1/2 + x * NEAR(x^2)
//   |x| >  TS_PHI_SPLIT:  Phi(-|x|) = exp(-x^2 / 2) / |x| * FAR(1 / x^2),   Phi(|x|) = 1 - Phi(-|x|)
// Neither form cancels: the first stays above 0.02, the second is a product. Each list applies STEP
// to the coefficients, highest degree first, so a kernel writes Horner's rule as
//   r = 0; TS_PHI_NEAR(STEP)        with STEP(c) doing r = fma(r, u, c)
// Replayed in F32 on 40000 random inputs, the worst GELU error is {worst:.3f} of the op's tolerance
// ({ulp:.2f} ulp)."""


def main():
    P = [f32(c) for c in mp.chebyfit(near, [0, SPLIT * SPLIT], P_DEGREE + 1)]
    R = [f32(c) for c in mp.chebyfit(far, [0, 1 / (SPLIT * SPLIT)], R_DEGREE + 1)]
    worst, at = check(P, R)
    print(HEADER.format(worst=worst, ulp=at[1]))
    print(f"#define TS_PHI_SPLIT {SPLIT!r}")
    print(macro("TS_PHI_NEAR", P))
    print(macro("TS_PHI_FAR", R), end="")


def macro(name, coefs):
    return f"#define {name}(STEP) \\\n" + " \\\n".join(f"  STEP({c!r})" for c in coefs) + "\n"


def check(P, R):
    rng = random.Random(1)
    worst, at = 0.0, None
    for _ in range(40000):
        x = f32(rng.choice([rng.uniform(-12, 12), rng.gauss(0, 1)]))
        ref = mp.mpf(x) * mp.ncdf(mp.mpf(x))
        err = abs(mp.mpf(gelu_f32(x, P, R)) - ref)
        ulp = 2.0 ** (math.frexp(float(ref))[1] - 24) if ref != 0 else 2.0**-149
        tol = max(20 * ulp, 3 * 16 * 2.0**-24)  # gelu.cpp: 20 ulp, atol 3 * 16 u32 (ignoring the subnormal step)
        if err / tol > worst:
            worst, at = float(err / tol), (x, float(err / ulp))
    return worst, at


if __name__ == "__main__":
    main()
