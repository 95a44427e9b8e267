#pragma once
// Case files (docs/catalog.md, "The case file"): one op invocation on concrete tensors, as safetensors.
// Metadata: "op", every parameter by name, "seed" when generated. Tensors: inputs and in-outs under
// their names, expected outputs as "expected.<name>".
#include <optional>
#include <string>

#include "core/op.h"
#include "core/safetensors.h"

namespace ts {

// A case is its problem (op, parameters, dtypes, declarations: validated once, when the case is
// generated or read) plus its tensors.
struct Case : Problem {
  TensorMap tensors;   // inputs and in-outs (as their input values); outputs allocated and poisoned
  TensorMap expected;  // name (without "expected.") -> expected output, when the file has them
  std::optional<uint64_t> seed;
  ParamMap metadata;   // parameters as stored
};

// Parses and fully validates: unknown op, bad parameters, missing or mis-shaped tensors, indices out
// of range, expected tensors of the wrong shape all raise Error.
Case case_from_file(SafetensorsFile f);  // by value: a file read for the case moves its tensors in
// The same for an op given by the caller (one outside the catalog: a test's, an out-of-tree one's);
// the file's "op" must name it.
Case case_from_file(SafetensorsFile f, const Op& op);
Case load_case(const std::string& path);

// A case as a file: inputs and in-outs from `inputs`, expected.* from `expected` (may be empty).
SafetensorsFile case_to_file(const Op& op, const Params& p, const TensorMap& inputs, const TensorMap& expected,
                             std::optional<uint64_t> seed);

// The seed of a generated case: a stable hash of op, case and dtype, the same in the matrix, the
// goldens and `touchstone gen`, so a printed seed reproduces the case anywhere.
uint64_t case_seed(const Op& op, const std::string& case_name, DType dt);

// A case of the catalog by name (a conformance case or a benchmark preset) of dtype `dtype` (one of
// the preset's; empty: its first), generated from `seed` (none: case_seed's, the matrix's). Errors name
// what exists. What `touchstone gen` and the Python module's case() make.
Case named_case(const Op& op, const std::string& name, const std::string& dtype, std::optional<uint64_t> seed);

// Generates a case from its description: inputs from `seed`, expected outputs from the reference.
Case generate_case(const Op& op, const Params& p, DType dt, uint64_t seed);
// The same for a problem already made (its parameters checked): nothing is resolved again.
Case generate_case(const Problem& pr, uint64_t seed);

// The tensors a backend runs on: inputs and in-outs copied, outputs allocated and poisoned.
TensorMap working_set(const Case& c);

}  // namespace ts
