#include "core/op.h"

#include "core/memory_budget.h"

#include <cmath>
#include <limits>
#include <cstring>
#include <set>

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

std::vector<std::string> Op::output_names(const Params& p) const {
  std::vector<std::string> out;
  for (const auto& d : tensors(p, DType::F32))
    if (d.role != Role::In) out.push_back(d.name);
  return out;
}

DType case_dtype(const Op& op, const Params& p, const TensorMap& t) {
  // Declared with a placeholder dtype: the unpinned tensors are the ones that carry the case dtype.
  const auto decls = op.tensors(p, DType::F64);
  for (const auto& d : decls) {
    if (d.pinned != DType::F64) continue;
    auto it = t.find(d.name);
    if (it != t.end()) {
      const DType dt = it->second.dtype();
      check(dt == DType::F32 || dt == DType::F16 || dt == DType::BF16,
            "tensor '{}' has dtype {}; {} takes F32, F16 or BF16 activations", d.name, dtype_name(dt),
            op.name());
      return dt;
    }
  }
  return DType::F32;
}

void validate_against_decls(const std::string& op, const std::vector<TensorDecl>& decls, const TensorMap& t) {
  std::set<std::string> declared;
  for (const auto& d : decls) {
    declared.insert(d.name);
    auto it = t.find(d.name);
    if (d.role == Role::Out) {
      if (it == t.end()) continue;  // outputs may be absent (a user's case); the harness allocates them
    } else {
      check(it != t.end(), "{}: missing tensor '{}'", op, d.name);
    }
    const Tensor& x = it->second;
    check(x.dtype() == *d.pinned, "{}: tensor '{}' has dtype {}, expected {}", op, d.name,
          dtype_name(x.dtype()), dtype_name(*d.pinned));
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
    Tensor x(*d.pinned, d.shape);
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
