#include "core/op.h"
#include "core/traffic.h"

#include "core/memory_budget.h"

#include <cmath>
#include <limits>
#include <cstring>
#include <set>

#include <fmt/format.h>

namespace ts {

std::string_view tier_name(Tier t) {
  switch (t) {
    case Tier::Smoke: return "smoke";
    case Tier::Ci: return "ci";
    case Tier::Full: return "full";
  }
  return "?";
}

std::optional<Tier> tier_from_name(std::string_view s) {
  for (Tier t : {Tier::Smoke, Tier::Ci, Tier::Full})
    if (tier_name(t) == s) return t;
  return std::nullopt;
}

Tier tier_or_throw(std::string_view s) {
  auto t = tier_from_name(s);
  check(t.has_value(), "--tier must be smoke, ci or full, not '{}'", s);
  return *t;
}

std::string TensorDecl::dtype_rule_str() const {
  switch (rule) {
    case DTypeRule::Activation: return fmt::format("{} (the case's activation dtype)", dtype_name(dtype));
    case DTypeRule::Pinned: return fmt::format("{} (pinned by the catalog)", dtype_name(dtype));
    case DTypeRule::Param: return fmt::format("{} ({})", dtype_name(dtype), param);
  }
  return std::string(dtype_name(dtype));
}

const TensorDecl* Problem::decl(std::string_view name) const {
  for (const auto& d : decls)
    if (d.name == name) return &d;
  return nullptr;
}

DType Problem::dtype_of(std::string_view name) const {
  const TensorDecl* d = decl(name);
  check(d != nullptr, "{} declares no tensor '{}'", op->name(), name);
  return d->dtype;
}

std::vector<std::string> Problem::output_names() const {
  std::vector<std::string> out;
  for (const auto& d : decls)
    if (d.role != Role::In) out.push_back(d.name);
  return out;
}

std::string Problem::op_variant() const { return variant.empty() ? op->name() : op->name() + " " + variant; }

TensorMap Op::make_case(const Params& p, DType dt, uint64_t seed) const {
  return make_case(make_problem(*this, p, dt), seed);
}

void Op::validate(const Params& p, const TensorMap& t) const {
  check_params(p);
  validate(problem_of(*this, p, t), t);
}

Tolerance Op::tolerance(const Params& p, DType dt, const TensorMap& inputs) const {
  const auto outs = make_problem(*this, p, dt).output_names();
  check(!outs.empty(), "{} has no outputs", name());
  return tolerance(p, dt, outs.front(), inputs);
}

DType case_dtype(const Op& op, const Params& p, const TensorMap& t, const TensorMap* expected) {
  for (const auto& d : op.tensors(p, DType::F32)) {
    if (d.rule != DTypeRule::Activation) continue;
    auto it = t.find(d.name);
    if (it == t.end() && expected && d.role != Role::In) {
      it = expected->find(d.name);
      if (it == expected->end()) continue;
    } else if (it == t.end()) {
      continue;
    }
    const DType dt = it->second.dtype();
    check(dt == DType::F32 || dt == DType::F16 || dt == DType::BF16,
          "{}: tensor '{}' has dtype {}; its activations are F32, F16 or BF16", op.name(), d.name, dtype_name(dt));
    return dt;
  }
  return DType::F32;
}

Problem make_problem(const Op& op, const Params& p, DType dt) {
  return Problem{&op, p, dt, op.tensors(p, dt), op.variant(p)};
}

Problem problem_of(const Op& op, const Params& p, const TensorMap& t, const TensorMap* expected) {
  return make_problem(op, p, case_dtype(op, p, t, expected));
}

void validate_against_decls(const std::string& op, const std::vector<TensorDecl>& decls, const TensorMap& t) {
  std::set<std::string> declared;
  for (const auto& d : decls) {
    declared.insert(d.name);
    auto it = t.find(d.name);
    if (d.role == Role::Out) {
      if (it == t.end()) continue;  // outputs may be absent (a user's case); the harness allocates them
    } else {
      check(it != t.end(), "{}: missing tensor '{}' ({})", op, d.name, d.dtype_rule_str());
    }
    const Tensor& x = it->second;
    check(x.dtype() == d.dtype, "{}: tensor '{}' has dtype {}, expected {}", op, d.name, dtype_name(x.dtype()),
          d.dtype_rule_str());
    check(x.shape() == d.shape, "{}: tensor '{}' has shape {}, the parameters need {}", op, d.name,
          shape_str(x.shape()), shape_str(d.shape));
  }
  for (const auto& [name, x] : t) {
    const bool expected = name.rfind("expected.", 0) == 0 && declared.count(name.substr(9));
    check(declared.count(name) || expected, "{}: unexpected tensor '{}'", op, name);
  }
}

void poison(Tensor& t) {
  if (is_float(t.dtype()))
    t.fill(std::numeric_limits<double>::quiet_NaN());
  else
    std::memset(t.data(), 0xff, t.nbytes());
}

TensorMap allocate_from_decls(const std::vector<TensorDecl>& decls) {
  check_memory_budget(decls_footprint(decls), "the case's tensors");
  TensorMap t;
  for (const auto& d : decls) {
    Tensor x(d.dtype, d.shape);
    if (d.role == Role::Out) poison(x);
    t.emplace(d.name, std::move(x));
  }
  return t;
}

const Op& op_or_throw(std::string_view name) {
  const Op* op = find_op(name);
  check(op != nullptr, "unknown op '{}' (touchstone list shows every op)", name);
  return *op;
}

const Op* find_op(std::string_view name) {
  for (const Op* op : all_ops())
    if (op->name() == name) return op;
  return nullptr;
}

}  // namespace ts

namespace ts {

double write_share(const Op& op, const Params& p, DType dt) {
  double read = 0, written = 0;
  for (const TensorDecl& d : op.tensors(p, dt)) {
    const double bytes = static_cast<double>(shape_numel(d.shape)) * static_cast<double>(dtype_size(d.dtype));
    if (d.role != Role::Out) read += bytes;
    if (d.role != Role::In) written += bytes;
  }
  return read > 0 ? written / read : std::numeric_limits<double>::infinity();
}

}  // namespace ts
