#include "core/case_file.h"

#include <algorithm>
#include <charconv>

#include "core/case_list.h"
#include "core/memory_budget.h"
#include "reference/kernels.h"

namespace ts {

Case case_from_file(SafetensorsFile f) {
  auto it = f.metadata.find("op");
  check(it != f.metadata.end(), "case file has no \"op\" in its metadata");
  const Op& op = op_or_throw(it->second);
  return case_from_file(std::move(f), op);
}

Case case_from_file(SafetensorsFile f, const Op& op) {
  auto it = f.metadata.find("op");
  check(it != f.metadata.end() && it->second == op.name(), "case file is not a case of {}", op.name());
  Case c;
  c.op = &op;
  c.metadata = f.metadata;
  if (auto s = f.metadata.find("seed"); s != f.metadata.end()) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s->second.data(), s->second.data() + s->second.size(), v);
    check(ec == std::errc() && p == s->second.data() + s->second.size(), "seed '{}' is not an integer", s->second);
    c.seed = v;
  }
  TensorMap inputs;
  for (auto& [name, t] : f.tensors) {
    if (name.rfind("expected.", 0) == 0)
      c.expected.emplace(name.substr(9), std::move(t));
    else
      inputs.emplace(name, std::move(t));
  }
  const Params params = c.op->parse(f.metadata, &inputs);
  static_cast<Problem&>(c) = problem_of(*c.op, params, inputs, &c.expected);
  c.op->validate(c, inputs);
  for (const auto& [name, t] : c.expected) {
    const TensorDecl* d = c.decl(name);
    check(d && d->role != Role::In, "expected.{} is not an output of {}", name, c.op->name());
    check(t.dtype() == d->dtype && t.shape() == d->shape, "expected.{}: {} {}, the op produces {} {}", name,
          dtype_name(t.dtype()), shape_str(t.shape()), dtype_name(d->dtype), shape_str(d->shape));
  }
  // Only what the file does not hold is allocated (the outputs, poisoned); the inputs move in.
  std::vector<TensorDecl> missing;
  for (const auto& d : c.decls)
    if (!inputs.count(d.name)) missing.push_back(d);
  TensorMap all = allocate_from_decls(missing);  // weighed against the memory budget first
  check_work_budget(c);                          // before the reference or any backend runs it
  for (auto& [name, t] : inputs) all[name] = std::move(t);
  c.tensors = std::move(all);
  return c;
}

Case load_case(const std::string& path) {
  try {
    return case_from_file(read_safetensors(path));
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(path, 0) == 0) throw;
    fail("{}: {}", path, msg);
  }
}

SafetensorsFile case_to_file(const Op& op, const Params& p, const TensorMap& inputs, const TensorMap& expected,
                             std::optional<uint64_t> seed) {
  SafetensorsFile f;
  f.metadata = op.to_map(p);
  f.metadata["op"] = op.name();
  if (seed) f.metadata["seed"] = std::to_string(*seed);
  for (const auto& d : problem_of(op, p, inputs).decls) {
    if (d.role != Role::Out) f.tensors.emplace(d.name, inputs.at(d.name));
    if (auto e = expected.find(d.name); e != expected.end() && d.role != Role::In)
      f.tensors.emplace("expected." + d.name, e->second);
  }
  return f;
}

uint64_t case_seed(const Op& op, const std::string& case_name, DType dt) {
  return stable_hash(case_key(op.name(), case_name, dt));
}

Case named_case(const Op& op, const std::string& name, const std::string& dtype, std::optional<uint64_t> seed) {
  const CaseSpec* spec = nullptr;
  for (const auto* list : {&op.cases(), &op.benches()})
    for (const auto& c : *list)
      if (c.name == name) spec = &c;
  check(spec != nullptr, "{} has no case '{}' (touchstone cases --op {})", op.name(), name, op.name());
  // Without a dtype: the case's first (F32 for most; a case of vLLM's F16 layout lists F16 first).
  DType dt = spec->dtypes.empty() ? DType::F32 : spec->dtypes.front();
  if (!dtype.empty()) {
    const auto parsed = dtype_from_name(dtype);
    check(parsed && (*parsed == DType::F32 || *parsed == DType::F16 || *parsed == DType::BF16),
          "dtype must be F32, F16 or BF16, not '{}'", dtype);
    dt = *parsed;
    std::string listed;
    for (DType t : spec->dtypes) listed += (listed.empty() ? "" : ", ") + std::string(dtype_name(t));
    check(spec->dtypes.empty() || std::find(spec->dtypes.begin(), spec->dtypes.end(), dt) != spec->dtypes.end(),
          "case '{}' of {} is not defined for {} (its dtypes: {})", spec->name, op.name(), dtype_name(dt), listed);
  }
  return generate_case(op, spec->params, dt, seed.value_or(case_seed(op, spec->name, dt)));
}

Case generate_case(const Op& op, const Params& p, DType dt, uint64_t seed) {
  op.check_params(p);
  return generate_case(make_problem(op, p, dt), seed);
}

Case generate_case(const Problem& pr, uint64_t seed) {
  Case c;
  static_cast<Problem&>(c) = pr;
  const Op& op = *pr.op;
  c.seed = seed;
  c.metadata = op.to_map(pr.params);
  check_memory_budget(decls_footprint(pr.decls), "the case's tensors");  // memory first, then work,
  check_work_budget(pr);  // both before anything is generated or computed
  c.tensors = op.make_case(c, seed);
  op.validate(c, c.tensors);  // the generator's own output must be a valid case
  TensorMap out = c.tensors;
  ref::run(op, pr.params, out);
  for (const auto& name : c.output_names()) c.expected.emplace(name, std::move(out.at(name)));
  return c;
}

TensorMap working_set(const Case& c) {
  TensorMap t = c.tensors;
  for (const auto& d : c.decls)
    if (d.role == Role::Out) poison(t.at(d.name));
  return t;
}

}  // namespace ts
