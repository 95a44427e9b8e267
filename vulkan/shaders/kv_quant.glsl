// KV pool element encodings, bit for bit as core/ops/kv/kv_quant.h defines them (the conformance
// compares the pools exactly): nothing here may rest on GLSL's own division or conversions, whose
// rounding Vulkan leaves to the driver (division within 2.5 ulp, f16 conversion in any mode).

// RN(a / b) for finite a and b > 0, by long division of the significands. Quotients below 2^-126
// come back as a signed zero: the codes of such values are 0 in I8 and F8_E4M3 alike.
float div_rn(float a, float b) {
  const uint ua = floatBitsToUint(a) & 0x7fffffffu, ub = floatBitsToUint(b);
  if (ua == 0u) return a;
  int ea = int(ua >> 23), eb = int(ub >> 23);
  uint ma = ua & 0x7fffffu, mb = ub & 0x7fffffu;
  // Significands of 24 bits with the leading one at bit 23 (subnormals normalised).
  if (ea == 0) { const int s = 23 - findMSB(ma); ma <<= s; ea = 1 - s; } else ma |= 0x800000u;
  if (eb == 0) { const int s = 23 - findMSB(mb); mb <<= s; eb = 1 - s; } else mb |= 0x800000u;
  int e = ea - eb;
  if (ma < mb) { ma <<= 1; e -= 1; }  // ma / mb in [1, 2)
  uint q = 0u, r = ma;
  for (int i = 0; i < 25; ++i) {  // 24 quotient bits and a guard bit; r stays below 2 mb < 2^25
    q <<= 1;
    if (r >= mb) { r -= mb; q |= 1u; }
    r <<= 1;
  }
  uint m = q >> 1;
  if ((q & 1u) != 0u && (r != 0u || (m & 1u) != 0u)) m += 1u;  // to nearest, ties to even
  if (m == 0x1000000u) { m >>= 1; e += 1; }
  const float sgn = a < 0.0 ? -1.0 : 1.0;
  if (e < -126) return sgn * 0.0;
  return sgn * ldexp(float(m), e - 23);
}

// I8: round half away from zero, clamped to [-127, 127] (the code as a byte).
uint i8_code(float q) {
  const float t = trunc(q);
  const float r = abs(q - t) >= 0.5 ? t + sign(q) : t;  // q - t is exact
  return uint(int(clamp(r, -127.0, 127.0))) & 0xffu;
}

// F8_E4M3 (fn): nearest even, saturating at 448 (0x7e), subnormals in units of 2^-9.
uint f8_code(float q) {
  const uint s = (floatBitsToUint(q) >> 24) & 0x80u, ua = floatBitsToUint(q) & 0x7fffffffu;
  const float a = uintBitsToFloat(ua);
  if (a >= 448.0) return s | 0x7eu;
  if (a < 0.015625) return s | uint(roundEven(a * 512.0));  // exact scaling; 8 is the smallest normal
  int e = int(ua >> 23) - 127;
  const uint m = (ua & 0x7fffffu) | 0x800000u, rem = m & 0xfffffu;
  uint keep = m >> 20;  // 1 implicit + 3 explicit bits
  if (rem > 0x80000u || (rem == 0x80000u && (keep & 1u) != 0u)) keep += 1u;
  if (keep == 16u) { keep = 8u; e += 1; }
  const int biased = e + 7;
  if (biased > 15 || (biased == 15 && keep - 8u > 6u)) return s | 0x7eu;
  return s | (uint(biased) << 3) | (keep - 8u);
}

// F16 bits of f, to nearest even (overflow to infinity, subnormals exact).
uint f16_code(float f) {
  const uint u = floatBitsToUint(f), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return s | 0x7e00u;
  if (a >= 0x477ff000u) return s | 0x7c00u;  // 65520 and above round to infinity
  if (a < 0x38800000u) return s | uint(roundEven(uintBitsToFloat(a) * 16777216.0));  // below 2^-14
  const uint m = a - 0x38000000u;  // the exponent rebiased from 127 to 15
  return s | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13);
}
