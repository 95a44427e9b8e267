#pragma once
// The cpu backend's KV-pool quantizer, exported for its exactness test (tests/cpu_kv_quantize_test.cpp).
#include <cstdint>

namespace ts::cpu {

// codes[i] = f32_to_f8e4m3(x[i] / scale) (core/dtype.h: e4m3fn, nearest even, saturating at 448), in
// SIMD lanes on the best target the CPU has (TOUCHSTONE_CPU_SIMD caps it). scale > 0.
void quantize_f8e4m3(const float* x, int64_t n, float scale, uint8_t* codes);

}  // namespace ts::cpu
