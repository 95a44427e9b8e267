#pragma once
// A backend by name when this build has it and it runs here (no driver, or TOUCHSTONE_CPU_SIMD capping
// the cpu away, make it unavailable): tests of one backend's kernels skip rather than fail without it.
#include <algorithm>
#include <string>
#include <vector>

#include "core/backend.h"

namespace ts::test {

inline Backend* available_backend(const std::string& name) {
  const std::vector<std::string> names = backend_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return nullptr;
  Backend& b = backend(name);
  return b.availability().ok ? &b : nullptr;
}

}  // namespace ts::test
