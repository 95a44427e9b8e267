// Row conversions F32 <-> F32 / F16 / BF16.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/runtime/convert.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/runtime/common.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

void ToF32(DType dt, const void* src, float* dst, int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    RowToF32(static_cast<const T*>(src), dst, n);
  });
}

void FromF32(DType dt, const float* src, void* dst, int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    RowFromF32(src, static_cast<T*>(dst), n);
  });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ts::cpu {
HWY_EXPORT(ToF32);
HWY_EXPORT(FromF32);

void to_f32(DType dt, const void* src, float* dst, int64_t n) { HWY_DYNAMIC_DISPATCH(ToF32)(dt, src, dst, n); }
void from_f32(DType dt, const float* src, void* dst, int64_t n) { HWY_DYNAMIC_DISPATCH(FromF32)(dt, src, dst, n); }
}  // namespace ts::cpu
#endif
