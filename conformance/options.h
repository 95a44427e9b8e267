#pragma once
#include <cstdint>
#include <string>

#include "core/op.h"

namespace ts {

// The matrix's own command-line flags (see matrix.cpp).
struct Options {
  std::string argv0 = "touchstone-conformance";
  std::string backend, op, family;
  Tier tier = Tier::Ci;
  uint64_t seed = 0;
  std::string failures_dir = "failures";
  std::string golden_dir;
  bool goldens = true;
  bool require_available = false;  // exit 1 instead of 77 when the selected backend is unavailable
};

int register_matrix(const Options& o);

}  // namespace ts
