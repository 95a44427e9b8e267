// The fused MoE combine is exactly its unfused chain, on every backend that runs both:
// weighted_sum_residual_norm_stacked == weighted_sum_residual_stacked, then rms_norm (core) of the
// residual it left with next_norm_w. On the reference the two agree bit for bit (the fused reference is
// defined as that chain: same sums, same rounding of the residual, same norm). On another backend the
// fused kernel may sum in another order and normalise its F32 sum before rounding it, so the two agree
// within the fused op's own tolerances (residual: the weighted sum's; normed_out: rms_norm's plus one
// rounding of the residual and the sum's error, core/ops/moe/weighted_sum_residual_norm_stacked.cpp).
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/case_file.h"
#include "core/ops/core_params.h"
#include "core/ops/moe_params.h"

namespace ts {
namespace {

// The same elements under another shape: the fused op's rows are [hidden], rms_norm's [tokens, dim].
Tensor reshaped(const Tensor& t, Shape s) {
  Tensor r(t.dtype(), std::move(s));
  std::memcpy(r.data(), t.data(), t.nbytes());
  return r;
}

struct Outputs {
  TensorMap inputs, fused, chain;  // inputs: the case's, which the tolerance is derived from
};

// Runs the fused op and its chain on `b` from the same generated inputs; false (with `why`) when the
// backend does not take one of the three problems.
bool run_both(Backend& b, const WeightedSumResidualNormParams& p, DType dt, Outputs& r, std::string& why) {
  const Op& fused = op_or_throw("weighted_sum_residual_norm_stacked");
  const Op& sum = op_or_throw("weighted_sum_residual_stacked");
  const Op& norm = op_or_throw("rms_norm");
  const Params fp = Params::of(p), sp = Params::of(WeightedSumStackedParams{p.n_slots, p.hidden}),
               np = Params::of(RmsNormParams{1, p.hidden, p.eps});
  const std::vector<std::pair<const Op*, Params>> problems = {{&fused, fp}, {&sum, sp}, {&norm, np}};
  for (const auto& [op, params] : problems) {
    const Support s = b.supports(make_problem(*op, params, dt));
    if (!s.ok) {
      why = fmt::format("{} {}: {}", op->name(), dtype_name(dt), s.reason);
      return false;
    }
  }
  const Case c = generate_case(fused, fp, dt, 11);
  r.inputs = c.tensors;
  r.fused = c.tensors;
  run_case(b, fused, fp, r.fused);

  TensorMap s{{"slots", c.tensors.at("slots")}, {"weights", c.tensors.at("weights")},
              {"residual", c.tensors.at("residual")}};
  run_case(b, sum, sp, s);
  const Shape row{1, p.hidden};
  TensorMap n{{"x", reshaped(s.at("residual"), row)},
              {"w", c.tensors.at("next_norm_w")},
              {"out", reshaped(c.tensors.at("normed_out"), row)}};
  run_case(b, norm, np, n);
  r.chain = {{"residual", s.at("residual")}, {"normed_out", reshaped(n.at("out"), {p.hidden})}};
  return true;
}

class MoeFused : public ::testing::TestWithParam<std::string> {};

TEST_P(MoeFused, ResidualNormEqualsItsChain) {
  Backend& b = backend(GetParam());
  const Availability a = b.availability();
  if (!a.ok) GTEST_SKIP() << GetParam() << " unavailable: " << a.detail;
  const Op& fused = op_or_throw("weighted_sum_residual_norm_stacked");
  const bool bitwise = GetParam() == "reference";
  int judged = 0;
  std::string skipped;
  const std::vector<WeightedSumResidualNormParams> shapes = {
      {1, 1, 1e-6f}, {2, 7, 1e-6f}, {8, 257, 1e-5f}, {6, 2048, 1e-6f}, {2, 4096, 1e-5f}};
  for (const auto& p : shapes)
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      Outputs r;
      if (!run_both(b, p, dt, r, skipped)) continue;
      ++judged;
      for (const char* out : {"residual", "normed_out"}) {
        const Tolerance tol = bitwise ? Tolerance{0, 0, "the reference: its definition, bit for bit"}
                                      : fused.tolerance(Params::of(p), dt, out, r.inputs);
        const ErrorReport e = compare(r.chain.at(out), r.fused.at(out), tol);
        EXPECT_TRUE(e.pass()) << GetParam() << " n_slots=" << p.n_slots << " hidden=" << p.hidden << " "
                              << dtype_name(dt) << " " << out << ": " << e.summary() << " (" << tol.str() << ")";
      }
    }
  if (judged == 0) GTEST_SKIP() << GetParam() << " runs the fused op or its chain in no dtype: " << skipped;
}

INSTANTIATE_TEST_SUITE_P(Backends, MoeFused, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
