#include "core/case_list.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/case_file.h"

namespace ts {

std::string case_key(std::string_view op, std::string_view case_name, DType dt) {
  return fmt::format("{}/{}/{}", op, case_name, dtype_name(dt));
}

std::string case_file_stem(std::string_view op, std::string_view case_name, DType dt) {
  return fmt::format("{}__{}__{}", op, case_name, dtype_name(dt));
}

std::string_view op_of_file_stem(std::string_view stem) { return stem.substr(0, stem.find("__")); }

std::string CaseEntry::golden_path() const { return fmt::format("{}/{}.safetensors", op->family(), file_stem()); }

std::string CaseEntry::name() const { return fmt::format("{}/{}", spec->name, dtype_name(dtype)); }

std::string CaseEntry::test_suite(std::string_view backend) const { return fmt::format("{}/{}", backend, op->name()); }

std::string CaseEntry::test_name(std::string_view backend) const {
  return fmt::format("{}.{}", test_suite(backend), name());
}

std::string CaseEntry::bench_name(std::string_view backend) const {
  return fmt::format("{}/{}/{}/{}", op->name(), backend, spec->name, dtype_name(dtype));
}

std::string CaseEntry::failure_stem(std::string_view backend) const { return fmt::format("{}__{}", backend, file_stem()); }

uint64_t CaseEntry::seed() const { return case_seed(*op, spec->name, dtype); }

Problem CaseEntry::problem() const {
  op->check_params(spec->params);
  return make_problem(*op, spec->params, dtype);
}

std::vector<CaseEntry> op_cases(const Op& op, const CaseFilter& f) {
  std::vector<CaseEntry> out;
  for (const CaseSpec& spec : f.set == CaseSet::Conformance ? op.cases() : op.benches()) {
    if (spec.tier > f.max_tier) continue;
    if (f.keep && !f.keep(op, spec)) continue;
    auto listed = [&](DType dt) { return std::find(spec.dtypes.begin(), spec.dtypes.end(), dt) != spec.dtypes.end(); };
    for (DType dt : f.dtypes.empty() ? spec.dtypes : f.dtypes)
      if (listed(dt)) out.push_back({&op, &spec, dt});
  }
  return out;
}

std::vector<CaseEntry> enumerate_cases(const CaseFilter& f) {
  if (!f.op.empty()) op_or_throw(f.op);
  if (!f.family.empty())
    check(std::any_of(all_ops().begin(), all_ops().end(), [&](const Op* op) { return op->family() == f.family; }),
          "unknown family '{}'", f.family);
  std::vector<CaseEntry> out;
  for (const Op* op : all_ops()) {
    if (!f.op.empty() && f.op != op->name()) continue;
    if (!f.family.empty() && f.family != op->family()) continue;
    const std::vector<CaseEntry> mine = op_cases(*op, f);
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

}  // namespace ts
