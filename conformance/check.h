#pragma once
// Running one case on one backend and judging it: shared by the matrix, the golden tests and the
// CLI's `check` and `matrix`, so all of them apply the same rules.
#include <string>
#include <vector>

#include "conformance/known_failures.h"
#include "core/backend.h"
#include "core/case_file.h"

namespace ts {

struct OutputVerdict {
  std::string name;
  Tolerance tolerance;  // this output's own (an op may judge its outputs differently)
  ErrorReport report;
};

struct Verdict {
  bool pass = true;
  std::vector<OutputVerdict> outputs;
  std::string problem;  // a run error, a guard overwrite, non-determinism: empty when none
  // The backend refused the case when it planned or launched it (ts::Unsupported): the reason. Not a
  // pass and not a failure: reported as "unsupported: <reason>", as a "no" from supports() is.
  std::string unsupported;
  // One line per output (its figures) plus the problem; with `tolerances`, each output's tolerance
  // on a line of its own below it.
  std::string describe(bool tolerances = false) const;
};

// Runs `c` on `b` and compares every expected output under that output's tolerance (the backend's own,
// Backend::tolerance, where it states one, else the op's), skipping the
// elements the op leaves unwritten. The case was validated when it was made and the caller has
// checked b.supports(c): neither is repeated here. With `determinism`, runs a second time and
// requires bit-identical outputs.
Verdict check_case(Backend& b, const Case& c, bool determinism);

// A verdict against the known-failure list: a listed case that passes is an unexpected pass and
// fails like a failure, so the list never outlives the bug. One rule for the GoogleTest matrix and
// `touchstone matrix`.
enum class Outcome { Pass, Fail, Known, UnexpectedPass, Unsupported };
Outcome classify(const Verdict& v, const KnownFailure* known);
inline bool fails(Outcome o) { return o == Outcome::Fail || o == Outcome::UnexpectedPass; }

}  // namespace ts
