#include "core/memory_budget.h"

#include <cstdlib>
#include <string>

#include <unistd.h>

#include "core/checked.h"
#include "core/op.h"

namespace ts {

namespace {

// A count as an environment variable `var` spells it: digits, then optionally a unit K, M, G or T
// (powers of `base`) and, for bytes, a trailing B.
uint64_t parse_count(std::string_view s, const char* var, const char* noun, uint64_t base) {
  const std::string text(s);
  check(!s.empty(), "{} is empty: give {} such as 4G or 512M", var, noun);
  uint64_t v = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
    v = checked::add_u(checked::mul_u(v, 10, var), uint64_t(s[i] - '0'), var);
  check(i > 0, "{} '{}' is not {} (such as 4G or 512M)", var, text, noun);
  if (i == s.size()) return v;
  check(i + 1 == s.size() || (i + 2 == s.size() && (s[i + 1] == 'B' || s[i + 1] == 'b')),
        "{} '{}' is not {} (such as 4G or 512M)", var, text, noun);
  int power = 0;
  switch (s[i]) {
    case 'K': case 'k': power = 1; break;
    case 'M': case 'm': power = 2; break;
    case 'G': case 'g': power = 3; break;
    case 'T': case 't': power = 4; break;
    default: fail("{} '{}' has an unknown unit (K, M, G or T)", var, text);
  }
  for (int p = 0; p < power; ++p) v = checked::mul_u(v, base, var);
  return v;
}

}  // namespace

uint64_t parse_byte_count(std::string_view s) { return parse_count(s, "TOUCHSTONE_MEMORY_BUDGET", "a byte count", 1024); }

uint64_t parse_operation_count(std::string_view s) {
  return parse_count(s, "TOUCHSTONE_WORK_BUDGET", "an operation count", 1000);
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

uint64_t work_budget() {
  if (const char* env = std::getenv("TOUCHSTONE_WORK_BUDGET")) return parse_operation_count(env);
  return kDefaultWorkBudget;
}

double case_operations(const Problem& pr) {
  const Cost c = pr.op->cost(pr.params, pr.dtype);
  return c.flops + c.bytes;
}

void check_work_budget(const Problem& pr) {
  const Cost c = pr.op->cost(pr.params, pr.dtype);
  const double ops = c.flops + c.bytes;
  const uint64_t budget = work_budget();
  check(ops <= static_cast<double>(budget),
        "{} ({}): the case asks for {:.3g} operations ({:.3g} FLOPs + {:.3g} bytes moved, by the op's cost model), "
        "more than the work budget of {:.3g} operations (set TOUCHSTONE_WORK_BUDGET to change it)",
        pr.op->name(), params_str(pr.op->to_map(pr.params)), ops, c.flops, c.bytes, static_cast<double>(budget));
}

}  // namespace ts
