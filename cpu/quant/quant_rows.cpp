// The GGUF row kernels of cpu/quant/quant_rows.h: the per-kind dots (DotRowQ8 of
// cpu/quant/quant_int8_dot-inl.h, DotRow of cpu/quant/quant_decode-inl.h), taken up to 4 activation rows
// at a time so one pass over a weight row serves four.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/quant/quant_rows.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <type_traits>

#include "cpu/quant/quant_decode-inl.h"
#include "cpu/quant/quant_int8_dot-inl.h"
#include "cpu/quant/quant_int8_vnni-inl.h"
#include "cpu/quant/quant_rows.h"
#include "cpu/runtime/simd_target.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// Whether this instance's VNNI step runs (the CPU has it, no test switched it off).
bool VnniStepRuns() {
#if TS_QUANT_VNNI_STEP
  return cpu_avx512_vnni() && int8_vnni_allowed();
#else
  return false;
#endif
}

// Pairs [i0, i0 + m) of one weight row, m <= 4 (the dot's row count is a template argument), in the
// VNNI step where `vnni`.
template <class K>
HWY_INLINE void DotPairs(const uint8_t* row, int64_t blocks, const typename K::Act* act, int64_t m, float* out,
                         int64_t ldo, bool vnni) {
#if TS_QUANT_VNNI_STEP
  if (vnni) switch (m) {
      case 1: return DotRowQ8Vnni<K, 1>(row, blocks, act, out, ldo);
      case 2: return DotRowQ8Vnni<K, 2>(row, blocks, act, out, ldo);
      case 3: return DotRowQ8Vnni<K, 3>(row, blocks, act, out, ldo);
      default: return DotRowQ8Vnni<K, 4>(row, blocks, act, out, ldo);
    }
#else
  (void)vnni;
#endif
  switch (m) {
    case 1: return DotRowQ8<K, 1>(row, blocks, act, out, ldo);
    case 2: return DotRowQ8<K, 2>(row, blocks, act, out, ldo);
    case 3: return DotRowQ8<K, 3>(row, blocks, act, out, ldo);
    default: return DotRowQ8<K, 4>(row, blocks, act, out, ldo);
  }
}

// Up to 4 activation rows (decode): row-major over the weights, so a row is fetched from memory once
// and every activation's dot reads it from L1. More (prefill, or an expert's share of one): 4 int8
// activation rows stay in L1 while the task's weight rows, read from memory by the first 4, pass them
// from L2; the other order would pull every activation row from L2 for each weight row (7x the bytes
// for Q4_K; measured 96 -> 74 ms for Qwen3-30B-A3B's 512-token expert gate projection).
// (Flattened per kind, as quant_gemm.cpp's GEMV: the per-kind lambdas must inline for the decode to
// stay in registers.)
template <class K>
HWY_FLATTEN void RowsInt8Of(const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const typename K::Act* act,
                            int64_t n, float* out, int64_t ldo) {
  const int64_t blocks = n_cols / K::kElems;
  const bool vnni = VnniStepRuns();
  const auto dot = [&](int64_t r, int64_t i) {
    DotPairs<K>(w + r * blocks * K::kBytes, blocks, act + i, std::min<int64_t>(4, n - i), out + i * ldo + (r - r0), ldo,
                vnni);
  };
  if (n <= 4) {
    for (int64_t r = r0; r < r1; ++r) dot(r, 0);
    return;
  }
  for (int64_t i = 0; i < n; i += 4)
    for (int64_t r = r0; r < r1; ++r) dot(r, i);
}

void RowsInt8(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const ActQ8* a,
              const ActQ8K* ak, int64_t n, float* out, int64_t ldo) {
  VisitKind(kind, [&](auto block) {
    using K = decltype(block);
    if constexpr (std::is_same_v<typename K::Act, ActQ8>)
      RowsInt8Of<K>(w, n_cols, r0, r1, a, n, out, ldo);
    else
      RowsInt8Of<K>(w, n_cols, r0, r1, ak, n, out, ldo);
  });
}

template <class K>
HWY_FLATTEN void RowsExactOf(const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32,
                             const float* const* sums, int64_t n, float* out, int64_t ldo) {
  const int64_t blocks = n_cols / K::kElems;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t i = 0; i < n; ++i)
      DotRow<K, 1>(w + r * blocks * K::kBytes, blocks, a32[i], 0, sums[i], 0, out + i * ldo + (r - r0), ldo);
}

void RowsExact(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32,
               const float* const* sums, int64_t n, float* out, int64_t ldo) {
  VisitKind(kind, [&](auto block) { RowsExactOf<decltype(block)>(w, n_cols, r0, r1, a32, sums, n, out, ldo); });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <atomic>

namespace ts::cpu {
HWY_EXPORT(RowsInt8);
HWY_EXPORT(RowsExact);
HWY_EXPORT(VnniStepRuns);

namespace {
std::atomic<bool> vnni_allowed{true};
}  // namespace

bool int8_vnni_allowed() { return vnni_allowed.load(std::memory_order_relaxed); }
void allow_int8_vnni(bool allow) { vnni_allowed.store(allow, std::memory_order_relaxed); }
bool int8_vnni_step() { return HWY_DYNAMIC_DISPATCH(VnniStepRuns)(); }

void rows_int8(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const ActQ8* a,
               const ActQ8K* ak, int64_t n, float* out, int64_t ldo) {
  HWY_DYNAMIC_DISPATCH(RowsInt8)(kind, w, n_cols, r0, r1, a, ak, n, out, ldo);
}

void rows_exact(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32,
                const float* const* sums, int64_t n, float* out, int64_t ldo) {
  HWY_DYNAMIC_DISPATCH(RowsExact)(kind, w, n_cols, r0, r1, a32, sums, n, out, ldo);
}

}  // namespace ts::cpu
#endif
