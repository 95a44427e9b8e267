#pragma once
// Known failures, declared as data (backend, op, case, dtype, reason). A listed combination that fails
// is reported as a known failure; one that passes is an "unexpected pass" and fails the test, so the
// list never outlives the bug. "*" matches anything.
#include <string>
#include <vector>

namespace ts {

struct KnownFailure {
  std::string backend, op, case_name, dtype, reason;
};

const std::vector<KnownFailure>& known_failures();
const KnownFailure* find_known_failure(const std::string& backend, const std::string& op,
                                       const std::string& case_name, const std::string& dtype);

}  // namespace ts
