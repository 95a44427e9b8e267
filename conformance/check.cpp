#include "conformance/check.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/unsupported.h"

namespace ts {

std::string Verdict::describe(bool tolerances) const {
  std::string s;
  for (const auto& o : outputs) {
    s += fmt::format("  {:<14} {} {}\n", o.name, o.report.pass() ? "ok  " : "FAIL", o.report.summary());
    if (tolerances) s += fmt::format("  {:<14}      tolerance: {}\n", "", o.tolerance.str());
  }
  if (!problem.empty()) s += "  " + problem + "\n";
  return s;
}

namespace {
// Bit equality of the compared elements: slots the op leaves unwritten may differ between runs.
bool same_bits(const Tensor& x, const Tensor& y, const std::vector<uint8_t>& compared) {
  if (compared.empty()) return std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
  const size_t esz = dtype_size(x.dtype());
  for (size_t i = 0; i < compared.size(); ++i)
    if (compared[i] && std::memcmp(x.data() + i * esz, y.data() + i * esz, esz) != 0) return false;
  return true;
}
// The elements of `output` the op's definition writes (empty: all of them).
std::vector<uint8_t> compared_elements(const Case& c, const std::string& output) {
  if (!c.expected.count(output)) return {};
  return c.op->compared(c.params, output, c.tensors, c.expected);
}
}  // namespace

Verdict check_case(Backend& b, const Case& c, bool determinism) {
  Verdict v;
  TensorMap io = working_set(c);
  try {
    execute_case(b, c, io);
  } catch (const Unsupported& e) {
    v.pass = false;
    v.unsupported = e.what();
    v.problem = fmt::format("unsupported: {}", e.what());
    return v;
  } catch (const Error& e) {
    v.pass = false;
    v.problem = fmt::format("error: {}", e.what());
    return v;
  }
  v = judge_outputs(c, views(io), &b);
  if (determinism) {
    TensorMap again = working_set(c);
    try {
      execute_case(b, c, again);
    } catch (const Error& e) {
      v.pass = false;
      v.problem = fmt::format("error on the second run: {}", e.what());
      return v;
    }
    for (const auto& name : c.output_names()) {
      const Tensor &x = io.at(name), &y = again.at(name);
      if (!same_bits(x, y, compared_elements(c, name))) {
        v.pass = false;
        v.problem = fmt::format("non-deterministic: output '{}' differs between two runs of the same case", name);
      }
    }
  }
  return v;
}

Verdict judge_outputs(const Case& c, const ViewMap& got, Backend* b) {
  Verdict v;
  for (const auto& [name, want] : c.expected) {
    // The backend's own tolerance where it states one (a kernel quantizing its activations), else the op's.
    const std::optional<Tolerance> own = b ? b->tolerance(c, name, c.tensors) : std::nullopt;
    OutputVerdict o{name, own ? *own : c.op->tolerance(c.params, c.dtype, name, c.tensors), {}};
    const auto it = got.find(name);
    check(it != got.end(), "no output '{}' to compare with expected.{}", name, name);
    o.report = compare(want.view(), it->second, o.tolerance, compared_elements(c, name));
    v.pass = v.pass && o.report.pass();
    v.outputs.push_back(std::move(o));
  }
  return v;
}

void check_output_set(const Case& c, const ViewMap& outputs) {
  const std::vector<std::string> names = c.output_names();
  std::string listed;
  for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
  for (const auto& [name, t] : outputs)
    check(std::find(names.begin(), names.end(), name) != names.end(),
          "'{}' is not an output of {} (its outputs: {})", name, c.op->name(), listed);
  for (const auto& name : names) {
    const auto it = outputs.find(name);
    check(it != outputs.end(), "output '{}' of {} is missing (its outputs: {})", name, c.op->name(), listed);
    const TensorDecl& d = *c.decl(name);
    check(it->second.dtype == d.dtype, "output '{}' is {}, but {} declares it {}", name,
          dtype_name(it->second.dtype), c.op->name(), d.dtype_rule_str());
    check(it->second.shape == d.shape, "output '{}' has shape {}, but this case's is {}", name,
          shape_str(it->second.shape), shape_str(d.shape));
  }
}

std::string fill_expected(Case& c) {
  if (!c.expected.empty()) return "the case's expected.* tensors";
  TensorMap ref = working_set(c);
  run_case(backend("reference"), c, ref);
  for (const auto& name : c.output_names()) c.expected.emplace(name, std::move(ref.at(name)));
  return "the reference (the case has no expected.* tensors)";
}

std::string verdict_report(const std::string& producer, const Case& c, const std::string& case_name, const Verdict& v) {
  return fmt::format("{} op={} case={} dtype={} seed={}\n  params: {}\n{}", producer, c.op->name(), case_name,
                     dtype_name(c.dtype), c.seed.value_or(0), params_str(c.metadata), v.describe(true));
}

Outcome classify(const Verdict& v, const KnownFailure* known) {
  if (!v.unsupported.empty()) return Outcome::Unsupported;
  if (known) return v.pass ? Outcome::UnexpectedPass : Outcome::Known;
  return v.pass ? Outcome::Pass : Outcome::Fail;
}

}  // namespace ts
