#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/runtime/stream_copy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstddef>

#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

void StreamCopy(void* dst, const void* src, size_t n) { StreamBytes(dst, src, n); }

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/runtime/stream_copy.h"

namespace ts::cpu {
HWY_EXPORT(StreamCopy);

void stream_copy(void* dst, const void* src, size_t n) { HWY_DYNAMIC_DISPATCH(StreamCopy)(dst, src, n); }

}  // namespace ts::cpu
#endif
