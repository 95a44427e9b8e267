#include "vulkan/plan.h"

#include "core/unsupported.h"

#include <algorithm>
#include <numeric>
#include <array>

namespace ts::vk {

const TensorDecl& Decls::at(const std::string& name) const {
  const TensorDecl* d = pr_.decl(name);
  check(d != nullptr, "vulkan planner: {} declares no tensor '{}'", pr_.op->name(), name);
  return *d;
}

std::string Target::variant(Kernel k) const {
  std::optional<std::string> name = variant_name(k, dtype, subgroups);
  check(name.has_value(), "vulkan: no {} variant of {} (vulkan/kernels.inc)", dtype_name(dtype), kernel_info(k).id);
  return *name;
}

Push& Push::u(int64_t v) {
  supported_only_if(v >= 0 && v <= 0xffffffffll, "value {} does not fit the Vulkan kernels' 32-bit indices", v);
  words_.push_back(static_cast<uint32_t>(v));
  return *this;
}

std::vector<std::pair<int64_t, int64_t>> Target::row_windows(int64_t rows, uint64_t row_bytes) const {
  if (static_cast<uint64_t>(rows) * row_bytes <= max_range) return {{0, rows}};
  // Windows of a multiple of `unit` rows start at aligned offsets (the data itself starts aligned).
  const uint64_t unit = offset_align / std::gcd(row_bytes, offset_align);
  const uint64_t per = row_bytes ? max_range / row_bytes / unit * unit : 0;
  supported_only_if(per > 0, "vulkan: a tensor of {} rows of {} bytes exceeds maxStorageBufferRange ({}) and no window of "
        "whole rows fits it at the {}-byte offset alignment", rows, row_bytes, max_range, offset_align);
  std::vector<std::pair<int64_t, int64_t>> w;
  for (int64_t r = 0; r < rows; r += static_cast<int64_t>(per)) w.push_back({r, std::min<int64_t>(per, rows - r)});
  return w;
}

uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

uint32_t groups_for(int64_t n, int64_t per_group, uint32_t limit) {
  return std::max<uint32_t>(1, std::min<uint32_t>(ceil_div(n, per_group), limit));
}

std::array<uint32_t, 3> grid_2d(int64_t rows, int64_t cols, int64_t wg, const Target& tg) {
  const uint32_t gx = groups_for(cols, wg, std::min(tg.group_cap, tg.max_groups[0]));
  const uint32_t gy = groups_for(rows, 1, std::min(std::max<uint32_t>(1, tg.group_cap / gx), tg.max_groups[1]));
  return {gx, gy, 1};
}

}  // namespace ts::vk
