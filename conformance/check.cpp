#include "conformance/check.h"

#include <cstring>

namespace ts {

std::string Verdict::describe() const {
  std::string s;
  for (const auto& o : outputs)
    s += fmt::format("  {:<14} {} {}\n", o.name, o.report.pass() ? "ok  " : "FAIL", o.report.summary());
  if (!problem.empty()) s += "  " + problem + "\n";
  return s;
}

Verdict check_case(Backend& b, const Case& c, bool determinism) {
  Verdict v;
  TensorMap io = working_set(c);
  try {
    run_case(b, *c.op, c.params, io);
  } catch (const Error& e) {
    v.pass = false;
    v.problem = fmt::format("error: {}", e.what());
    return v;
  }
  const Tolerance tol = c.op->tolerance(c.params, c.dtype);
  for (const auto& [name, want] : c.expected) {
    OutputVerdict o{name, compare(want, io.at(name), tol)};
    v.pass = v.pass && o.report.pass();
    v.outputs.push_back(std::move(o));
  }
  if (determinism) {
    TensorMap again = working_set(c);
    try {
      run_case(b, *c.op, c.params, again);
    } catch (const Error& e) {
      v.pass = false;
      v.problem = fmt::format("error on the second run: {}", e.what());
      return v;
    }
    for (const auto& name : c.op->output_names(c.params)) {
      const Tensor &x = io.at(name), &y = again.at(name);
      if (std::memcmp(x.data(), y.data(), x.nbytes()) != 0) {
        v.pass = false;
        v.problem = fmt::format("non-deterministic: output '{}' differs between two runs of the same case", name);
      }
    }
  }
  return v;
}

}  // namespace ts
