// The integer scoring kernel of cpu/attention/int8_scores.h in AVX-512 VNNI, outside Highway: Highway 1.0's
// AVX-512 targets name no VNNI (AVX3_DL adds only its 256-bit VEX form), so this function carries its
// own target attribute and runs only where int8_scores_available() says the CPU has it.
//
// vpdpbusd multiplies unsigned by signed bytes, four products summed into each int32 lane exactly.
// The pool's key codes are signed and any byte (a user's pool may hold -128); the query codes are
// within +-127. So the key codes are read biased by 128 (an xor of the sign bit: k + 128 in 0..255)
// and the queries are the signed operand: sum (k + 128) q = k.q + 128 sum q, and the row's
// 128 sum q (Int8QueryGroup::bias) comes off once per score. Every lane stays far inside int32
// (head_dim / 16 steps of 4 products below 2^15 each).
#include <algorithm>

#include "core/error.h"
#include "cpu/attention/int8_scores.h"
#include "cpu/runtime/prefetch.h"
#include "cpu/runtime/simd_target.h"

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's avx512fintrin.h starts the unpacks' results from _mm512_undefined_epi32 (a variable
// initialised from itself), which -Wmaybe-uninitialized reports once they are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "cpu/runtime/avx512_lanes.h"
#define TS_INT8_SCORES_X86 1
#endif

namespace ts::cpu {

#if TS_INT8_SCORES_X86
bool int8_scores_available() {
  // The attention kernels call this one from their AVX-512 instances only (attention_kernel-inl.h):
  // a target capped below them (TOUCHSTONE_CPU_SIMD=AVX2) runs the exact route.
  static const bool ok = cpu_avx512_vnni() && select_simd_target().rfind("AVX3", 0) == 0;
  return ok;
}

#define TS_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

namespace {

// Sixteen accumulators (row r, key i at 4 r + i) to one vector whose lane 4 r + i is their full sum:
// SumBlocks4 (cpu/runtime/avx512_lanes.h) per row, then the four blocks of the four rows transposed
// and added.
TS_VNNI inline __m512i Sum16(const __m512i* acc) {
  const __m512i w0 = SumBlocks4(acc[0], acc[1], acc[2], acc[3]);
  const __m512i w1 = SumBlocks4(acc[4], acc[5], acc[6], acc[7]);
  const __m512i w2 = SumBlocks4(acc[8], acc[9], acc[10], acc[11]);
  const __m512i w3 = SumBlocks4(acc[12], acc[13], acc[14], acc[15]);
  // [w0 b0+b2, w0 b1+b3, w1 b0+b2, w1 b1+b3], the same of w2, w3; then whole rows.
  const __m512i a = _mm512_add_epi32(_mm512_shuffle_i32x4(w0, w1, 0x44), _mm512_shuffle_i32x4(w0, w1, 0xEE));
  const __m512i b = _mm512_add_epi32(_mm512_shuffle_i32x4(w2, w3, 0x44), _mm512_shuffle_i32x4(w2, w3, 0xEE));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(a, b, 0x88), _mm512_shuffle_i32x4(a, b, 0xDD));
}

TS_VNNI inline void Ask(const Int8KeyPrefetch& pf, int64_t j) {
  const int64_t i = j + pf.offset;
  if (pf.offset < 0 || i >= pf.limit) return;
  prefetch_l2(pf.k[i], pf.kbytes);
  if (pf.values) prefetch_l2(pf.v[i], pf.vbytes);
}

// Four keys a step for the group's four rows: 16 accumulators and the 4 biased key vectors of a
// column step, each key vector loaded once for the four rows. kSteps > 0: head_dim within kSteps
// column steps, the four rows' query vectors loaded once for all keys and held in registers (8 of the
// 32 at head_dim 128, 29 in all), so a key step is its key loads, its VNNI products and its sums;
// kSteps = 0: any head_dim, the query vectors reloaded at each key step.
template <int kSteps>
TS_VNNI void ScoreKeys(const Int8QueryGroup& q, const int8_t* const* krow, const float* ks, int64_t n, int64_t dk,
                       float* s, int64_t ld, const Int8KeyPrefetch& prefetch) {
  const int64_t steps = kSteps > 0 ? kSteps : (dk + kInt8ScoreStep - 1) / kInt8ScoreStep;
  const __mmask64 tail = dk % kInt8ScoreStep ? (__mmask64{1} << (dk % kInt8ScoreStep)) - 1 : ~__mmask64{0};
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  // Lanes of block r: row r's bias and factor.
  const __m512i bias = _mm512_setr_epi32(q.bias[0], q.bias[0], q.bias[0], q.bias[0], q.bias[1], q.bias[1], q.bias[1],
                                         q.bias[1], q.bias[2], q.bias[2], q.bias[2], q.bias[2], q.bias[3], q.bias[3],
                                         q.bias[3], q.bias[3]);
  const __m512 factor = _mm512_setr_ps(q.factor[0], q.factor[0], q.factor[0], q.factor[0], q.factor[1], q.factor[1],
                                       q.factor[1], q.factor[1], q.factor[2], q.factor[2], q.factor[2], q.factor[2],
                                       q.factor[3], q.factor[3], q.factor[3], q.factor[3]);
  constexpr int kHeld = kSteps > 0 ? kSteps : 1;
  __m512i qv[4][kHeld];
  if constexpr (kSteps > 0)
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < kSteps; ++c) qv[r][c] = _mm512_loadu_si512(q.codes[r] + c * kInt8ScoreStep);
  for (int64_t j = 0; j < n; j += 4) {
    const int64_t m = std::min<int64_t>(4, n - j);  // keys this step (a short last step repeats one)
    for (int64_t i = 0; i < 4; ++i) Ask(prefetch, j + i);
    const int8_t* k[4];
    for (int64_t i = 0; i < 4; ++i) k[i] = krow[j + std::min(i, m - 1)];
    __m512i acc[16];
    for (auto& a : acc) a = _mm512_setzero_si512();
    for (int64_t c = 0; c < steps; ++c) {
      const __mmask64 mask = c + 1 == steps ? tail : ~__mmask64{0};
      const int64_t at = c * kInt8ScoreStep;
      // Masked-off bytes load as 0 and bias to 128; the query's padding is 0, so they add nothing.
      __m512i x[4];
      for (int i = 0; i < 4; ++i) x[i] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, k[i] + at), flip);
      for (int r = 0; r < 4; ++r) {
        __m512i qr;
        if constexpr (kSteps > 0) qr = qv[r][c];
        else qr = _mm512_loadu_si512(q.codes[r] + at);
        for (int i = 0; i < 4; ++i) acc[4 * r + i] = _mm512_dpbusd_epi32(acc[4 * r + i], x[i], qr);
      }
    }
    const __mmask8 keys = static_cast<__mmask8>((1u << m) - 1);
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(Sum16(acc), bias)), factor);
    if (ks) f = _mm512_mul_ps(f, _mm512_broadcast_f32x4(_mm_maskz_loadu_ps(keys, ks + j)));
    _mm_mask_storeu_ps(s + j, keys, _mm512_extractf32x4_ps(f, 0));
    if (q.rows > 1) _mm_mask_storeu_ps(s + ld + j, keys, _mm512_extractf32x4_ps(f, 1));
    if (q.rows > 2) _mm_mask_storeu_ps(s + 2 * ld + j, keys, _mm512_extractf32x4_ps(f, 2));
    if (q.rows > 3) _mm_mask_storeu_ps(s + 3 * ld + j, keys, _mm512_extractf32x4_ps(f, 3));
  }
}

}  // namespace

// Llama-style head sizes (64, 128) hold their queries in registers; the rest reload them.
TS_VNNI void score_int8_keys(const Int8QueryGroup& q, const int8_t* const* krow, const float* ks, int64_t n,
                             int64_t dk, float* s, int64_t ld, const Int8KeyPrefetch& prefetch) {
  if (dk <= kInt8ScoreStep) return ScoreKeys<1>(q, krow, ks, n, dk, s, ld, prefetch);
  if (dk <= 2 * kInt8ScoreStep) return ScoreKeys<2>(q, krow, ks, n, dk, s, ld, prefetch);
  ScoreKeys<0>(q, krow, ks, n, dk, s, ld, prefetch);
}

#else
bool int8_scores_available() { return false; }
void score_int8_keys(const Int8QueryGroup&, const int8_t* const*, const float*, int64_t, int64_t, float*, int64_t,
                     const Int8KeyPrefetch&) {
  fail("cpu backend: integer scoring of int8 keys needs AVX-512 VNNI");
}
#endif

}  // namespace ts::cpu
