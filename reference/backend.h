#pragma once
// The reference as a backend: ground truth runs through the same path as every other backend, so
// `touchstone run CASE --backend reference` and the matrix's reference column need no special case.
#include "core/backend.h"

namespace ts {

struct ReferenceBackend {
  static constexpr const char* kName = "reference";
  static std::unique_ptr<Backend> create();
};

}  // namespace ts
