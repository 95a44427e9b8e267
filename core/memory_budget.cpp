#include "core/memory_budget.h"

#include <cstdlib>
#include <string>

#include <unistd.h>

#include "core/checked.h"
#include "core/op.h"

namespace ts {

uint64_t parse_byte_count(std::string_view s) {
  const std::string text(s);
  check(!s.empty(), "TOUCHSTONE_MEMORY_BUDGET is empty: give a byte count such as 4G or 512M");
  uint64_t v = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
    v = checked::add_u(checked::mul_u(v, 10, "TOUCHSTONE_MEMORY_BUDGET"), uint64_t(s[i] - '0'), "TOUCHSTONE_MEMORY_BUDGET");
  check(i > 0, "TOUCHSTONE_MEMORY_BUDGET '{}' is not a byte count (such as 4G or 512M)", text);
  if (i == s.size()) return v;
  check(i + 1 == s.size() || (i + 2 == s.size() && (s[i + 1] == 'B' || s[i + 1] == 'b')),
        "TOUCHSTONE_MEMORY_BUDGET '{}' is not a byte count (such as 4G or 512M)", text);
  int shift = 0;
  switch (s[i]) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: fail("TOUCHSTONE_MEMORY_BUDGET '{}' has an unknown unit (K, M, G or T)", text);
  }
  return checked::mul_u(v, uint64_t{1} << shift, "TOUCHSTONE_MEMORY_BUDGET");
}

uint64_t memory_budget() {
  if (const char* env = std::getenv("TOUCHSTONE_MEMORY_BUDGET")) return parse_byte_count(env);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;  // unknown: 4 GiB
  return static_cast<uint64_t>(pages) / 4 * static_cast<uint64_t>(page);
}

uint64_t tensor_footprint(DType dt, const Shape& shape) {
  const uint64_t n = static_cast<uint64_t>(shape_numel(shape));
  return n == 0 ? 0 : n * dtype_size(dt) + 2 * kGuardBytes;  // n <= 2^40: no overflow
}

uint64_t decls_footprint(const std::vector<TensorDecl>& decls) {
  uint64_t total = 0;
  for (const auto& d : decls) {
    uint64_t b = 0;
    try {
      b = tensor_footprint(d.dtype, d.shape);  // resolved: every caller passes a problem's decls
    } catch (const Error& e) {
      fail("tensor '{}': {}", d.name, e.what());
    }
    total = checked::add_u(total, b, "the case's tensors");
  }
  return total;
}

void check_memory_budget(uint64_t bytes, std::string_view what) {
  const uint64_t budget = memory_budget();
  check(bytes <= budget,
        "{} need {} bytes ({:.3g} GiB), more than the memory budget of {} bytes ({:.3g} GiB; set "
        "TOUCHSTONE_MEMORY_BUDGET to change it)",
        what, bytes, double(bytes) / double(1ull << 30), budget, double(budget) / double(1ull << 30));
}

}  // namespace ts
