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
  bool require_available = false;
  // --world=W: the process is one of W ranks under mpiexec; only the collective cases over W ranks
  // (and the goldens, which skip the other worlds) are registered. 0: no MPI launch expected.
  int world = 0;  // exit 1 instead of 77 when the selected backend is unavailable
};

int register_matrix(const Options& o);

}  // namespace ts
