#pragma once
// Running one case on one backend and judging it: shared by the matrix, the golden tests and the
// CLI's `check`, so all three apply the same rules.
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/case_file.h"

namespace ts {

struct OutputVerdict {
  std::string name;
  ErrorReport report;
};

struct Verdict {
  bool pass = true;
  std::vector<OutputVerdict> outputs;
  std::string problem;  // a run error, a guard overwrite, non-determinism: empty when none
  std::string describe() const;  // one line per output plus the problem
};

// Runs `c` on `b` (validation, guards) and compares every expected output with the op's tolerance.
// With `determinism`, runs a second time and requires bit-identical outputs.
Verdict check_case(Backend& b, const Case& c, bool determinism);

}  // namespace ts
