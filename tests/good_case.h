#pragma once
// Bad-input tests start from a good case file: a generated case (inputs only), checked to load as it
// is, so a check that rejects everything cannot pass the test that then breaks one thing in it.
#include <string>

#include <gtest/gtest.h>

#include "core/case_file.h"
#include "core/op.h"

namespace ts {

// The case of `op_name` with parameters `m`, generated in F32.
inline SafetensorsFile good_case(const std::string& op_name, const ParamMap& m) {
  const Op& op = op_or_throw(op_name);
  const Params p = op.parse(m);
  SafetensorsFile f = case_to_file(op, p, op.make_case(p, DType::F32, 7), {}, 7);
  EXPECT_NO_THROW(case_from_file(f)) << op_name << ": the unmodified case must load";
  return f;
}

// The op's conformance case `case_name` (its presets carry what parameters alone cannot: lengths
// per sequence), generated in `dt`.
inline SafetensorsFile good_case(const std::string& op_name, const std::string& case_name, DType dt) {
  const Op& op = op_or_throw(op_name);
  for (const CaseSpec& c : op.cases())
    if (c.name == case_name) {
      SafetensorsFile f = case_to_file(op, c.params, op.make_case(c.params, dt, 7), {}, 7);
      EXPECT_NO_THROW(case_from_file(f)) << op_name << "/" << case_name << ": the unmodified case must load";
      return f;
    }
  ADD_FAILURE() << "no case " << case_name << " of " << op_name;
  return {};
}

}  // namespace ts
