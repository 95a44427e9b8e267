#include "conformance/check.h"

#include "core/unsupported.h"

#include <cstring>
#include <map>

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
  std::map<std::string, std::vector<uint8_t>> masks;  // per output: the elements compared (empty: all)
  for (const auto& name : c.output_names())
    if (c.expected.count(name)) masks[name] = c.op->compared(c.params, name, c.tensors, c.expected);
  for (const auto& [name, want] : c.expected) {
    // The backend's own tolerance where it states one (a kernel quantizing its activations), else the op's.
    const std::optional<Tolerance> own = b.tolerance(c, name);
    OutputVerdict o{name, own ? *own : c.op->tolerance(c.params, c.dtype, name), {}};
    o.report = compare(want, io.at(name), o.tolerance, masks[name]);
    v.pass = v.pass && o.report.pass();
    v.outputs.push_back(std::move(o));
  }
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
      if (!same_bits(x, y, masks[name])) {
        v.pass = false;
        v.problem = fmt::format("non-deterministic: output '{}' differs between two runs of the same case", name);
      }
    }
  }
  return v;
}

Outcome classify(const Verdict& v, const KnownFailure* known) {
  if (!v.unsupported.empty()) return Outcome::Unsupported;
  if (known) return v.pass ? Outcome::UnexpectedPass : Outcome::Known;
  return v.pass ? Outcome::Pass : Outcome::Fail;
}

}  // namespace ts
