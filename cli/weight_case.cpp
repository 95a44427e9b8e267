#include "cli/weight_case.h"

#include <stdexcept>

#include "core/case_file.h"
#include "core/memory_budget.h"
#include "core/ops/describe.h"
#include "core/rng.h"
#include "reference/kernels.h"

namespace ts::cli {

void write_weight_case(const std::string& out, const Problem& pr, uint64_t seed,
                       const std::function<void(TensorMap&)>& fill_weights) {
  const Op& op = *pr.op;
  check_work_budget(pr);  // a few KB of weights with a large --m can ask for hours of reference
  TensorMap tensors = op.make_case(pr, seed);
  fill_weights(tensors);
  Rng rng(seed);
  for (const TensorDecl& d : pr.decls)
    if (d.role != Role::Out && d.rule == DTypeRule::Activation) describe::normal(tensors.at(d.name), rng);
  op.validate(pr, tensors);
  TensorMap computed = tensors;
  ref::run(op, pr.params, computed);
  TensorMap expected;
  for (const auto& name : pr.output_names()) expected.emplace(name, std::move(computed.at(name)));
  write_safetensors(out, case_to_file(op, pr.params, tensors, expected, seed));
}

uint64_t seed_flag(const std::optional<std::string>& flag, const std::string& what) {
  if (!flag) return stable_hash(what);
  const std::string& s = *flag;
  try {
    size_t used = 0;
    const uint64_t v = std::stoull(s, &used);
    check(used == s.size() && s[0] != '-', "--seed '{}' is not a non-negative integer", s);
    return v;
  } catch (const std::logic_error&) {
    fail("--seed '{}' is not a non-negative integer", s);
  }
}

DType activation_dtype_flag(const std::optional<std::string>& flag) {
  const std::string d = flag.value_or("F32");
  const auto dt = dtype_from_name(d);
  check(dt && (*dt == DType::F32 || *dt == DType::F16 || *dt == DType::BF16), "--dtype must be F32, F16 or BF16, not '{}'", d);
  return *dt;
}

}  // namespace ts::cli
