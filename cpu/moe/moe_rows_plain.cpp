// The expert-GEMV engine's plain rows (cpu/moe/moe_rows.h): F32, F16 or BF16 expert weights widened in
// registers, each row against every pair routed to its expert while it sits in L1.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/moe/moe_rows_plain.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

void RowsPlain(DType dt, const void* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32, int64_t n,
               float* out, int64_t ldo) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = static_cast<const T*>(w) + r * n_cols;
      for (int64_t i = 0; i < n; ++i) out[i * ldo + (r - r0)] = Dot(a32[i], row, n_cols);
    }
  });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/moe/moe_rows.h"

namespace ts::cpu::moe {
HWY_EXPORT(RowsPlain);

void rows_plain(DType dt, const void* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32, int64_t n,
                float* out, int64_t ldo) {
  HWY_DYNAMIC_DISPATCH(RowsPlain)(dt, w, n_cols, r0, r1, a32, n, out, ldo);
}

}  // namespace ts::cpu::moe
#endif
