#pragma once
// The one description of an op that every part of touchstone reads: the conformance matrix, the
// benchmarks, the goldens and the CLI. Its ground truth is not named here: the reference registers
// its kernels against the op identities as every backend does (reference/kernels.h). An op is an
// OpDef<P> over its parameter struct P (core/params.h); the rest of the code sees it through the
// type-erased Op interface.
#include <any>
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

// Where a tensor's dtype comes from. Activation: the case's float dtype (F32, F16 or BF16; one per
// case). Pinned: fixed by docs/catalog.md (U8 quant bytes, I32 / U32 ids, F32 scales and routing weights, F16
// GPTQ/AWQ scales). Param: named by an enum parameter (a KV pool in `kv_dtype`, plain experts in `kind`).
enum class DTypeRule { Activation, Pinned, Param };

struct TensorDecl {
  std::string name;
  Role role = Role::In;
  DTypeRule rule = DTypeRule::Activation;
  DType dtype = DType::F32;  // Pinned and Param: the dtype; Activation: resolved by Op::tensors(p, dt)
  std::string param;         // Param: the parameter that names it, for errors ("kv_dtype=I8")
  Shape shape;
  // "U8 (pinned)", "I8 (kv_dtype=I8)", "BF16 (the case's activation dtype)": for errors.
  std::string dtype_rule_str() const;
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

// How one output is judged when it differs from the op's default: its own tolerance (an attention
// `lse` beside its `out`, MoE `ids` exact beside `weights` within a tolerance), and the elements the
// op's definition leaves unwritten (ids past tpe[e], padding past num_tokens_post_padded), which are
// not compared. Unwritten slots are still inside the tensor: its guard zones stay checked.
// A tolerance is derived from the case itself: its parameters, its activation dtype and its inputs
// (and in-outs, as they were before the op ran), so that a bound on the terms an output sums is the
// bound of this case's data (core/magnitude.h), not of the generator's, and a case made from a
// checkpoint or a user's own tensors is judged by its own magnitudes. Its `why` names what it read.
template <class P> using DerivedTolerance = std::function<Tolerance(const P&, DType, const TensorMap& inputs)>;

template <class P> struct OutputRule {
  std::string output;
  DerivedTolerance<P> tolerance;  // empty: the op's tolerance
  // Clears mask[i] for each element i that is not compared. Reads the case's inputs and the
  // reference's outputs (`expected`), since which slots exist can depend on either.
  std::function<void(const P&, const TensorMap& inputs, const TensorMap& expected, std::vector<uint8_t>& mask)>
      unwritten;
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
  // Another step of the same problem: redraws the generator's own per-step state (each sequence's
  // length and position, which a preset fixes and the tensors' values carry) within the same shapes and
  // parameters, so that one prepared launch can be run on new lengths as well as new data (the
  // conformance matrix's step tests, Launch::upload_inputs). Empty: a new seed alone makes a new step.
  std::function<void(P&, Rng&)> next_step;
  // Every output's tolerance, unless `outputs` gives one its own.
  DerivedTolerance<P> tolerance;
  std::vector<OutputRule<P>> outputs;
  std::function<Cost(const P&, DType)> cost;
  // The op's engine view, where it rides a shared engine: what its kernels read, computed once from the
  // parameters (moe::PairView, paged::AttentionView). Every backend reads it through view_of() and
  // none derives it again; empty for an op with no shared engine.
  std::function<std::any(const P&)> view;
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

class Op;

// One op invocation as a backend sees it when it decides whether it can run it and plans it: the op,
// its parameters, the case's activation dtype, every declared tensor with its dtype and shape
// resolved, and the variant (the enum parameters, "kind=Q4_K"). Built once per case (make_problem),
// then read by supports(), prepare() and the judge, so nothing is resolved twice.
struct Problem {
  const Op* op = nullptr;
  Params params;
  DType dtype = DType::F32;  // the activation dtype
  std::vector<TensorDecl> decls;
  std::string variant;

  const TensorDecl* decl(std::string_view name) const;  // nullptr when not declared
  DType dtype_of(std::string_view name) const;          // Error when not declared
  std::vector<std::string> output_names() const;         // outputs and in-outs, in order
  // "gemm_quant kind=Q4_K" or "gemm": a row of `touchstone list`.
  std::string op_variant() const;
};

class Op {
 public:
  virtual ~Op() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& family() const = 0;
  virtual const std::string& summary() const = 0;
  virtual std::vector<std::string> param_names() const = 0;

  // Parses metadata into parameters (unknown, missing or unparsable ones are Errors), infers derived
  // fields from `tensors` when given, and checks the parameters (check_params).
  virtual Params parse(const ParamMap& m, const TensorMap* tensors = nullptr) const = 0;
  virtual ParamMap to_map(const Params& p) const = 0;
  // Parameter consistency alone (num_heads % num_kv_heads, len > 0); parse() already ran it.
  virtual void check_params(const Params& p) const = 0;
  // "kind=Q4_K": the enum parameters of a case ("" when the op has none).
  virtual std::string variant(const Params& p) const = 0;
  // Declared tensors with shapes and dtypes resolved for a case of activation dtype `dt`.
  virtual std::vector<TensorDecl> tensors(const Params& p, DType dt) const = 0;
  // Every check on a case's tensors before any kernel sees them: each declared input and in-out
  // present with its dtype and shape, no stray tensors, index and position ranges. Throws Error.
  virtual void validate(const Problem& pr, const TensorMap& t) const = 0;
  // Inputs and in-outs generated from `seed`, outputs allocated (NaN-filled: unwritten shows up).
  virtual TensorMap make_case(const Problem& pr, uint64_t seed) const = 0;
  // Parameters for another step of the same problem (OpDef::next_step): the same shapes and the same
  // parameters, the generator's per-step lengths and positions redrawn from `seed`.
  virtual Params next_step(const Params& p, uint64_t seed) const = 0;
  // How output `output` is judged, derived from the case's inputs (and in-outs before the op), and
  // which of its elements are compared (empty: all of them).
  virtual Tolerance tolerance(const Params& p, DType dt, const std::string& output, const TensorMap& inputs) const = 0;
  virtual std::vector<uint8_t> compared(const Params& p, const std::string& output, const TensorMap& inputs,
                                        const TensorMap& expected) const = 0;
  // The outputs with rules of their own (OpDef::outputs), for the catalog's consistency test.
  virtual std::vector<std::string> ruled_outputs() const = 0;
  virtual Cost cost(const Params& p, DType dt) const = 0;
  // OpDef::view: an empty std::any for an op without one.
  virtual std::any view(const Params& p) const = 0;
  virtual const std::vector<CaseSpec>& cases() const = 0;
  virtual const std::vector<CaseSpec>& benches() const = 0;

  // Conveniences for tests and tools that hold parameters and tensors but no problem yet.
  TensorMap make_case(const Params& p, DType dt, uint64_t seed) const;
  void validate(const Params& p, const TensorMap& t) const;  // check_params, then validate its problem
  Tolerance tolerance(const Params& p, DType dt, const TensorMap& inputs) const;  // the first output's
};

// The activation dtype of a case: that of its first declared Activation tensor present in `t` (or,
// for an output, in `expected`, a case file's expected.* tensors); F32, F16 or BF16, else an Error.
// F32 when there is none (an op without activations, or a user's file holding no output).
DType case_dtype(const Op& op, const Params& p, const TensorMap& t, const TensorMap* expected = nullptr);
// The problem of a case of activation dtype `dt` (no tensors read).
Problem make_problem(const Op& op, const Params& p, DType dt);
// The problem of a case given its tensors: the activation dtype comes from them.
Problem problem_of(const Op& op, const Params& p, const TensorMap& t, const TensorMap* expected = nullptr);

// The engine view of a problem's op (OpDef::view) as type V; an Error when the op states none of
// that type (a backend registered an op on an engine whose view the op does not give).
template <class V> V view_as(const Op& op, const Params& p) {
  const std::any v = op.view(p);
  const V* typed = std::any_cast<V>(&v);
  check(typed != nullptr, "op {} states no {} view", op.name(), v.has_value() ? "matching" : "engine");
  return *typed;
}
template <class V> V view_of(const Problem& pr) { return view_as<V>(*pr.op, pr.params); }

template <class P> class TypedOp final : public Op {
 public:
  using Op::make_case;
  using Op::tolerance;
  using Op::validate;

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
  void check_params(const Params& p) const override {
    if (d_.validate_params) d_.validate_params(p.as<P>());
  }
  std::string variant(const Params& p) const override { return params_variant(p.as<P>()); }
  std::vector<TensorDecl> tensors(const Params& p, DType dt) const override {
    auto decls = d_.tensors(p.as<P>());
    for (auto& d : decls)
      if (d.rule == DTypeRule::Activation) d.dtype = dt;
    return decls;
  }
  void validate(const Problem& pr, const TensorMap& t) const override;
  TensorMap make_case(const Problem& pr, uint64_t seed) const override;
  Params next_step(const Params& p, uint64_t seed) const override {
    P q = p.as<P>();
    Rng rng(seed);
    if (d_.next_step) d_.next_step(q, rng);
    return Params::of(std::move(q));
  }
  Tolerance tolerance(const Params& p, DType dt, const std::string& output, const TensorMap& inputs) const override {
    const OutputRule<P>* r = rule(output);
    return r && r->tolerance ? r->tolerance(p.as<P>(), dt, inputs) : d_.tolerance(p.as<P>(), dt, inputs);
  }
  std::vector<uint8_t> compared(const Params& p, const std::string& output, const TensorMap& inputs,
                                const TensorMap& expected) const override {
    const OutputRule<P>* r = rule(output);
    if (!r || !r->unwritten) return {};
    std::vector<uint8_t> mask(static_cast<size_t>(expected.at(output).numel()), 1);
    r->unwritten(p.as<P>(), inputs, expected, mask);
    return mask;
  }
  std::any view(const Params& p) const override { return d_.view ? d_.view(p.as<P>()) : std::any{}; }
  std::vector<std::string> ruled_outputs() const override {
    std::vector<std::string> n;
    for (const auto& r : d_.outputs) n.push_back(r.output);
    return n;
  }
  Cost cost(const Params& p, DType dt) const override { return d_.cost(p.as<P>(), dt); }
  const std::vector<CaseSpec>& cases() const override { return cases_; }
  const std::vector<CaseSpec>& benches() const override { return benches_; }

 private:
  const OutputRule<P>* rule(const std::string& output) const {
    for (const auto& r : d_.outputs)
      if (r.output == output) return &r;
    return nullptr;
  }

  OpDef<P> d_;
  std::vector<CaseSpec> cases_, benches_;
};

// Shared by every TypedOp: the declaration-driven checks and allocation.
void validate_against_decls(const std::string& op, const std::vector<TensorDecl>& decls, const TensorMap& t);
TensorMap allocate_from_decls(const std::vector<TensorDecl>& decls);
// Fills an output so that any element a kernel forgets to write shows up: NaN, or all-ones bits.
void poison(Tensor& t);

template <class P> void TypedOp<P>::validate(const Problem& pr, const TensorMap& t) const {
  validate_against_decls(d_.name, pr.decls, t);
  if (d_.validate_data) d_.validate_data(pr.params.as<P>(), t);
}

template <class P> TensorMap TypedOp<P>::make_case(const Problem& pr, uint64_t seed) const {
  TensorMap t = allocate_from_decls(pr.decls);
  Rng rng(seed);
  d_.generate(pr.params.as<P>(), t, rng);
  return t;
}

// The catalog: every op, in docs/catalog.md order.
const std::vector<const Op*>& all_ops();
const Op* find_op(std::string_view name);  // nullptr when unknown
const Op& op_or_throw(std::string_view name);

}  // namespace ts
