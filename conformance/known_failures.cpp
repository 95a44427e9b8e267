#include "conformance/known_failures.h"

namespace ts {

const std::vector<KnownFailure>& known_failures() {
  static const std::vector<KnownFailure> list = {
      // {"backend", "op", "case", "dtype", "reason with a link to the bug"},
  };
  return list;
}

const KnownFailure* find_known_failure(const std::string& backend, const std::string& op,
                                       const std::string& case_name, const std::string& dtype) {
  auto match = [](const std::string& pattern, const std::string& v) { return pattern == "*" || pattern == v; };
  for (const auto& k : known_failures())
    if (match(k.backend, backend) && match(k.op, op) && match(k.case_name, case_name) && match(k.dtype, dtype))
      return &k;
  return nullptr;
}

}  // namespace ts
