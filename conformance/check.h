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

// The comparison half of check_case, for outputs produced anywhere (a backend's working set, a file of
// another program's outputs, arrays handed in from Python): every expected output of `c` against
// `got[name]` under its tolerance (`b`'s own where it states one; without a backend, the op's) and
// mask. `got` may hold more tensors than the outputs (a working set holds the inputs too). Views, so
// arrays handed in are compared where they lie.
Verdict judge_outputs(const Case& c, const ViewMap& got, Backend* b = nullptr);

// Outputs that did not come from a backend of ours are checked before they are judged: exactly the
// op's outputs by name, each with its declared dtype and shape. An Error naming the first that is not.
void check_output_set(const Case& c, const ViewMap& outputs);

// A case without expected.* tensors (a user's own, dumped from a model) gets the reference's outputs
// as its expectation. Returns what the case is judged against, for the report's first line.
std::string fill_expected(Case& c);

// The report of a judged case, as a failing conformance case prints it: who produced the outputs
// ("backend=cpu", "outputs=FILE"), op, case, dtype, seed, parameters, then every output's figures and
// tolerance with its derivation, and the problem when there is one.
std::string verdict_report(const std::string& producer, const Case& c, const std::string& case_name, const Verdict& v);

// A verdict against the known-failure list: a listed case that passes is an unexpected pass and
// fails like a failure, so the list never outlives the bug. One rule for the GoogleTest matrix and
// `touchstone matrix`.
enum class Outcome { Pass, Fail, Known, UnexpectedPass, Unsupported };
Outcome classify(const Verdict& v, const KnownFailure* known);
inline bool fails(Outcome o) { return o == Outcome::Fail || o == Outcome::UnexpectedPass; }

}  // namespace ts
