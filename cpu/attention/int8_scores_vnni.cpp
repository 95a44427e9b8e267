// The integer scoring kernel of cpu/attention/int8_scores.h in AVX-512 VNNI, outside Highway: Highway 1.0's
// AVX-512 targets name no VNNI (AVX3_DL adds only its 256-bit VEX form), so this function carries its
// own target attribute and runs only where int8_scores_available() says the CPU has it.
//
// vpdpbusd multiplies unsigned by signed bytes, four products summed into each int32 lane exactly.
// The pool's key codes are signed and any byte (a user's pool may hold -128); the query codes are
// within +-127. So the key codes are read biased by 128 (an xor of the sign bit: k + 128 in 0..255)
// and the queries are the signed operand: sum (k + 128) q = k.q + 128 sum q, and the row's
// 128 sum q (Int8QueryGroup::bias) comes off once per score. Every lane stays far inside int32
// (head_dim / 8 products a lane, each below 2^15 in magnitude).
#include <algorithm>

#include "core/error.h"
#include "cpu/attention/int8_scores.h"
#include "cpu/runtime/prefetch.h"
#include "cpu/runtime/simd_target.h"

#if defined(__x86_64__) || defined(__i386__)
// GCC 12's avx512fintrin.h starts the unpacks' and broadcasts' results from _mm512_undefined_epi32 (a
// variable initialised from itself), which -W(maybe-)uninitialized reports once they are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

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

// Two keys a vector: lanes 0..7 of a product take the first key's half of a 64-byte column step, lanes
// 8..15 the second's, against the query's half in both. Eight accumulators then hold the 16 (row,
// key) sums, which reduce in 22 instructions where 16 one-key accumulators took 45 (the reduction
// was as many instructions as the products at head_dim 128).
//
// acc[2 r + p]: row r, keys 2 p (lanes 0..7) and 2 p + 1 (lanes 8..15). Returns lane 4 r + i = the sum
// of row r with key i.
TS_VNNI inline __m512i SumPairs(const __m512i* acc) {
  __m512i u[4];
  // Per 128-bit block: [a0 + a2, b0 + b2, a1 + a3, b1 + b3] of a = keys 0, 1 (pair 0), b = keys 2, 3:
  // blocks 0, 1 hold (key 0, key 2), blocks 2, 3 (key 1, key 3).
  for (int r = 0; r < 4; ++r)
    u[r] = _mm512_add_epi32(_mm512_unpacklo_epi32(acc[2 * r], acc[2 * r + 1]),
                            _mm512_unpackhi_epi32(acc[2 * r], acc[2 * r + 1]));
  // Rows r, r + 1 per block: [r (key a), r (key b), r + 1 (key a), r + 1 (key b)], block shares.
  const __m512i w01 = _mm512_add_epi32(_mm512_unpacklo_epi64(u[0], u[1]), _mm512_unpackhi_epi64(u[0], u[1]));
  const __m512i w23 = _mm512_add_epi32(_mm512_unpacklo_epi64(u[2], u[3]), _mm512_unpackhi_epi64(u[2], u[3]));
  // Blocks 0 + 1 and 2 + 3: [r0k0 r0k2 r1k0 r1k2 | r0k1 r0k3 r1k1 r1k3 | r2k0 r2k2 r3k0 r3k2 | r2k1 ...].
  const __m512i t = _mm512_add_epi32(_mm512_shuffle_i32x4(w01, w23, _MM_SHUFFLE(2, 0, 2, 0)),
                                     _mm512_shuffle_i32x4(w01, w23, _MM_SHUFFLE(3, 1, 3, 1)));
  // Lane 4 r + i from lane 4 (2 (r / 2) + i % 2) + 2 (r % 2) + i / 2.
  const __m512i order = _mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
  return _mm512_permutexvar_epi32(order, t);
}

// One row's cache lines into L2: one or two prefetches with no loop for rows of up to 128 bytes
// (head_dim <= 128), where prefetch_l2's loop was a quarter of a key step's instructions.
TS_VNNI inline void AskRow(const int8_t* p, size_t bytes) {
  if (bytes > 128) return prefetch_l2(p, bytes);
  _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1);
  if (bytes > 64) _mm_prefetch(reinterpret_cast<const char*>(p) + 64, _MM_HINT_T1);
}

// Key j's requests: key row j + offset and value row j + v_offset, below the limit. pf is the
// kernel's own copy (by value), so its fields stay in registers across the score stores.
TS_VNNI inline void Ask(const Int8KeyPrefetch& pf, int64_t j) {
  if (pf.offset >= 0 && j + pf.offset < pf.limit) AskRow(pf.k[j + pf.offset], pf.kbytes);
  if (pf.v_offset >= 0 && j + pf.v_offset < pf.limit) AskRow(pf.v[j + pf.v_offset], pf.vbytes);
}

// Four keys a step for the group's four rows, two keys a vector (SumPairs): 8 accumulators, and per
// 64-byte column step each key's codes loaded and biased once, then split into halves paired with the
// other key's. kSteps > 0: head_dim within kSteps column steps, the rows' query halves (each in both
// halves of a vector) loaded once for all keys and held in registers (16 of the 32 at head_dim 128);
// kSteps = 0: any head_dim, the query halves reloaded at each key step.
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
  const int rows = q.rows;
  const Int8KeyPrefetch pf = prefetch;
  // Row r's codes [64 c + 32 h, + 32) in both halves of a vector.
  auto query_half = [&](int r, int64_t c, int h) TS_VNNI {
    return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q.codes[r] + c * kInt8ScoreStep + 32 * h)));
  };
  constexpr int kHeld = kSteps > 0 ? kSteps : 1;
  __m512i qv[4][kHeld][2];
  if constexpr (kSteps > 0)
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < kSteps; ++c)
        for (int h = 0; h < 2; ++h) qv[r][c][h] = query_half(r, c, h);
  // Keys k[0..3] (a short last step repeats its last key) into s[., j .. j + m).
  auto step = [&](int64_t j, const int8_t* const* k, int64_t m) TS_VNNI {
    __m512i acc[8];
    for (auto& a : acc) a = _mm512_setzero_si512();
    for (int64_t c = 0; c < steps; ++c) {
      const __mmask64 mask = c + 1 == steps ? tail : ~__mmask64{0};
      const int64_t at = c * kInt8ScoreStep;
      // Masked-off bytes load as 0 and bias to 128; the query's padding is 0, so they add nothing.
      __m512i x[4];
      for (int i = 0; i < 4; ++i) x[i] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, k[i] + at), flip);
      for (int p = 0; p < 2; ++p) {
        // [key 2p's half h | key 2p+1's half h] for h = 0, 1 (the shuffle's selector is an immediate)
        const __m512i pair[2] = {_mm512_shuffle_i64x2(x[2 * p], x[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                                 _mm512_shuffle_i64x2(x[2 * p], x[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2))};
        for (int h = 0; h < 2; ++h)
          for (int r = 0; r < 4; ++r) {
            __m512i qr;
            if constexpr (kSteps > 0) qr = qv[r][c][h];
            else qr = query_half(r, c, h);
            acc[2 * r + p] = _mm512_dpbusd_epi32(acc[2 * r + p], pair[h], qr);
          }
      }
    }
    const __mmask8 keys = static_cast<__mmask8>((1u << m) - 1);
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(SumPairs(acc), bias)), factor);
    if (ks) f = _mm512_mul_ps(f, _mm512_broadcast_f32x4(_mm_maskz_loadu_ps(keys, ks + j)));
    _mm_mask_storeu_ps(s + j, keys, _mm512_extractf32x4_ps(f, 0));
    if (rows > 1) _mm_mask_storeu_ps(s + ld + j, keys, _mm512_extractf32x4_ps(f, 1));
    if (rows > 2) _mm_mask_storeu_ps(s + 2 * ld + j, keys, _mm512_extractf32x4_ps(f, 2));
    if (rows > 3) _mm_mask_storeu_ps(s + 3 * ld + j, keys, _mm512_extractf32x4_ps(f, 3));
  };
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    for (int64_t i = 0; i < 4; ++i) Ask(pf, j + i);
    step(j, krow + j, 4);
  }
  if (j < n) {
    const int64_t m = n - j;
    for (int64_t i = 0; i < m; ++i) Ask(pf, j + i);
    const int8_t* k[4];
    for (int64_t i = 0; i < 4; ++i) k[i] = krow[j + std::min(i, m - 1)];
    step(j, k, m);
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
