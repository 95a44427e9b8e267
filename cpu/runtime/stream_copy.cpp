#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/runtime/stream_copy.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void StreamCopy(void* dst, const void* src, size_t n) {
  const hn::ScalableTag<uint8_t> d;
  const size_t V = hn::Lanes(d);
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  const size_t head = std::min(n, (V - reinterpret_cast<uintptr_t>(out) % V) % V);  // up to alignment
  std::memcpy(out, in, head);
  size_t i = head;
  for (; i + V <= n; i += V) hn::Stream(hn::LoadU(d, in + i), d, out + i);
  std::memcpy(out + i, in + i, n - i);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "cpu/runtime/stream_copy.h"

namespace ts::cpu {
HWY_EXPORT(StreamCopy);

void stream_copy(void* dst, const void* src, size_t n) { HWY_DYNAMIC_DISPATCH(StreamCopy)(dst, src, n); }

}  // namespace ts::cpu
#endif
