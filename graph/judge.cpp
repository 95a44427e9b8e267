#include "graph/judge.h"

#include "conformance/check.h"

namespace ts::graph {

NodeObserver NodeJudge::observer() {
  return [this](const Node& n, const TensorMap& before) {
    Case c;
    static_cast<Problem&>(c) = n.problem;
    c.tensors = before;
    TensorMap ref = before;
    execute_case(backend("reference"), n.problem, ref);
    for (const auto& name : n.problem.output_names()) c.expected.emplace(name, std::move(ref.at(name)));
    const Verdict v = judge_outputs(c, views(n.io), &b_);
    ++judged_;
    for (const auto& o : v.outputs)
      tolerances_.emplace(n.problem.op_variant() + " " + o.name, o.tolerance.str());
    if (!v.pass) {
      ++failed_;
      if (failed_ <= 4) failures_ += fmt::format("{} {} ({}):\n{}", b_.name(), n.label, n.problem.op_variant(), v.describe(true));
    }
  };
}

std::string NodeJudge::tolerances() const {
  std::string s;
  for (const auto& [k, t] : tolerances_) s += fmt::format("  {}: {}\n", k, t);
  return s;
}

}  // namespace ts::graph
