#pragma once
// Lane sums over AVX-512 int32 vectors that the VNNI kernels share (cpu/attention/int8_scores_vnni.cpp,
// cpu/quant/quant_int8_vnni-inl.h). AVX-512F only, always inlined: every caller's own target is wider.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace ts::cpu {

// Four int32 vectors to one holding, in each 128-bit block b, block b's share of each one's lane sum:
// lane 4b + p sums the four lanes of block b of a_p. (Two unpack levels, 9 instructions.)
__attribute__((target("avx512f"), always_inline)) inline __m512i SumBlocks4(__m512i a0, __m512i a1, __m512i a2,
                                                                          __m512i a3) {
  const __m512i s01 = _mm512_add_epi32(_mm512_unpacklo_epi32(a0, a1), _mm512_unpackhi_epi32(a0, a1));
  const __m512i s23 = _mm512_add_epi32(_mm512_unpacklo_epi32(a2, a3), _mm512_unpackhi_epi32(a2, a3));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(s01, s23), _mm512_unpackhi_epi64(s01, s23));
}

}  // namespace ts::cpu
#endif
