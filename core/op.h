#pragma once
// The one description of an op that every part of touchstone reads: the reference, the conformance
// matrix, the benchmarks, the goldens and the CLI. An op is an OpDef<P> over its parameter struct P
// (core/params.h); the rest of the code sees it through the type-erased Op interface.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <typeindex>
#include <vector>

#include "core/metrics.h"
#include "core/params.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace ts {

enum class Role { In, Out, InOut };
// Tiers nest: smoke is in ci, ci is in full.
enum class Tier { Smoke, Ci, Full };
std::string_view tier_name(Tier t);
std::optional<Tier> tier_from_name(std::string_view s);
Tier tier_or_throw(std::string_view s);  // an Error naming the three tiers for anything else

struct TensorDecl {
  std::string name;
  Role role = Role::In;
  std::optional<DType> pinned;  // nullopt: the case's float dtype; else this dtype (U32 ids, F32 scales)
  Shape shape;
};

// FLOPs and bytes moved (each input read once, each output written once: the roofline minimum).
struct Cost {
  double flops = 0;
  double bytes = 0;
};

inline const std::vector<DType> kFloatDtypes = {DType::F32, DType::F16, DType::BF16};

template <class P> struct Preset {
  std::string name;  // short and unique within the op: also the test name and benchmark suffix
  Tier tier = Tier::Ci;
  P params{};
  std::vector<DType> dtypes = kFloatDtypes;
};

template <class P> struct OpDef {
  std::string name, family, summary;
  std::function<std::vector<TensorDecl>(const P&)> tensors;
  // Parameter consistency, before shapes are computed (num_heads % num_kv_heads, len > 0, ...).
  std::function<void(const P&)> validate_params;
  // Checks on input values: indices in range, positions below max_pos. Runs on every case.
  std::function<void(const P&, const TensorMap&)> validate_data;
  // Fields not stored as parameters but implied by the tensors (a list's length).
  std::function<void(P&, const TensorMap&)> infer;
  // Fills inputs and in-outs (already allocated with their declared shapes and dtypes).
  std::function<void(const P&, TensorMap&, Rng&)> generate;
  // Writes every output and in-out; reads only inputs and in-outs.
  std::function<void(const P&, TensorMap&)> reference;
  std::function<Tolerance(const P&, DType)> tolerance;
  std::function<Cost(const P&, DType)> cost;
  std::vector<Preset<P>> cases;    // conformance: edges and small model shapes
  std::vector<Preset<P>> benches;  // benchmark presets: model-sized
};

// An op's parameter struct, type-erased. as<P>() checks the type.
class Params {
 public:
  Params() = default;
  template <class P> static Params of(P p) {
    Params r;
    r.p_ = std::make_shared<P>(std::move(p));
    r.type_ = std::type_index(typeid(P));
    return r;
  }
  template <class P> const P& as() const {
    check(p_ && type_ == std::type_index(typeid(P)), "parameter struct of the wrong type");
    return *static_cast<const P*>(p_.get());
  }

 private:
  std::shared_ptr<const void> p_;
  std::type_index type_ = std::type_index(typeid(void));
};

struct CaseSpec {
  std::string name;
  Tier tier = Tier::Ci;
  Params params;
  std::vector<DType> dtypes;
};

class Op {
 public:
  virtual ~Op() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& family() const = 0;
  virtual const std::string& summary() const = 0;
  virtual std::vector<std::string> param_names() const = 0;

  // Parses metadata into parameters (unknown, missing or unparsable ones are Errors), infers derived
  // fields from `tensors` when given, and validates the parameters.
  virtual Params parse(const ParamMap& m, const TensorMap* tensors = nullptr) const = 0;
  virtual ParamMap to_map(const Params& p) const = 0;
  // Declared tensors with shapes and dtypes resolved for a case of float dtype `dt`.
  virtual std::vector<TensorDecl> tensors(const Params& p, DType dt) const = 0;
  // Every check a case must pass before any kernel sees it: each declared input and in-out present
  // with its dtype and shape, no stray tensors, index and position ranges. Throws Error.
  virtual void validate(const Params& p, const TensorMap& t) const = 0;
  // Inputs and in-outs generated from `seed`, outputs allocated (NaN-filled: unwritten shows up).
  virtual TensorMap make_case(const Params& p, DType dt, uint64_t seed) const = 0;
  virtual void reference(const Params& p, TensorMap& t) const = 0;
  virtual Tolerance tolerance(const Params& p, DType dt) const = 0;
  virtual Cost cost(const Params& p, DType dt) const = 0;
  virtual const std::vector<CaseSpec>& cases() const = 0;
  virtual const std::vector<CaseSpec>& benches() const = 0;

  std::vector<std::string> output_names(const Params& p) const;  // outputs and in-outs, in order
};

// The float dtype of a case: that of its first declared tensor whose dtype is not pinned.
DType case_dtype(const Op& op, const Params& p, const TensorMap& t);

template <class P> class TypedOp final : public Op {
 public:
  explicit TypedOp(OpDef<P> d) : d_(std::move(d)) {
    for (auto* list : {&d_.cases, &d_.benches}) {
      auto& out = list == &d_.cases ? cases_ : benches_;
      for (const auto& c : *list) out.push_back({c.name, c.tier, Params::of(c.params), c.dtypes});
    }
  }
  const OpDef<P>& def() const { return d_; }
  const std::string& name() const override { return d_.name; }
  const std::string& family() const override { return d_.family; }
  const std::string& summary() const override { return d_.summary; }
  std::vector<std::string> param_names() const override { return ts::param_names<P>(); }
  Params parse(const ParamMap& m, const TensorMap* t) const override {
    P p = params_from_map<P>(m);
    if (t && d_.infer) d_.infer(p, *t);
    if (d_.validate_params) d_.validate_params(p);
    return Params::of(std::move(p));
  }
  ParamMap to_map(const Params& p) const override { return params_to_map(p.as<P>()); }
  std::vector<TensorDecl> tensors(const Params& p, DType dt) const override {
    auto decls = d_.tensors(p.as<P>());
    for (auto& d : decls)
      if (!d.pinned) d.pinned = dt;
    return decls;
  }
  void validate(const Params& p, const TensorMap& t) const override;
  TensorMap make_case(const Params& p, DType dt, uint64_t seed) const override;
  void reference(const Params& p, TensorMap& t) const override { d_.reference(p.as<P>(), t); }
  Tolerance tolerance(const Params& p, DType dt) const override { return d_.tolerance(p.as<P>(), dt); }
  Cost cost(const Params& p, DType dt) const override { return d_.cost(p.as<P>(), dt); }
  const std::vector<CaseSpec>& cases() const override { return cases_; }
  const std::vector<CaseSpec>& benches() const override { return benches_; }

 private:
  OpDef<P> d_;
  std::vector<CaseSpec> cases_, benches_;
};

// Shared by every TypedOp: the declaration-driven checks and allocation.
void validate_against_decls(const std::string& op, const std::vector<TensorDecl>& decls, const TensorMap& t);
TensorMap allocate_from_decls(const std::vector<TensorDecl>& decls);
// Fills an output so that any element a kernel forgets to write shows up: NaN, or all-ones bits.
void poison(Tensor& t);

template <class P> void TypedOp<P>::validate(const Params& p, const TensorMap& t) const {
  if (d_.validate_params) d_.validate_params(p.as<P>());
  validate_against_decls(d_.name, tensors(p, case_dtype(*this, p, t)), t);
  if (d_.validate_data) d_.validate_data(p.as<P>(), t);
}

template <class P> TensorMap TypedOp<P>::make_case(const Params& p, DType dt, uint64_t seed) const {
  TensorMap t = allocate_from_decls(tensors(p, dt));
  Rng rng(seed);
  d_.generate(p.as<P>(), t, rng);
  return t;
}

// The catalog: every op, in OPS.md order.
const std::vector<const Op*>& all_ops();
const Op* find_op(std::string_view name);  // nullptr when unknown
const Op& op_or_throw(std::string_view name);

}  // namespace ts
