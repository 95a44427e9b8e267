#include "vulkan/plan.h"

#include <algorithm>

namespace ts::vk {

std::string Target::variant(const std::string& kernel, bool reducing) const {
  const char* dt = dtype == DType::F16 ? "f16" : dtype == DType::BF16 ? "bf16" : "f32";
  return kernel + "_" + dt + (reducing && subgroups ? "_sg" : "");
}

Push& Push::u(int64_t v) {
  check(v >= 0 && v <= 0xffffffffll, "value {} does not fit the Vulkan kernels' 32-bit indices", v);
  words_.push_back(static_cast<uint32_t>(v));
  return *this;
}

uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

uint32_t groups_for(int64_t n, int64_t per_group, uint32_t limit) {
  return std::max<uint32_t>(1, std::min<uint32_t>(ceil_div(n, per_group), limit));
}

}  // namespace ts::vk
