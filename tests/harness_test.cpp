// The matrix's judge must catch what it claims to: wrong values, writes past an output, NaN where the
// reference has none, unwritten outputs, and non-determinism. Each test feeds check_case a broken
// kernel and requires a failure, and a correct kernel and requires a pass.
#include <atomic>
#include <memory>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/host_backend.h"
#include "core/ops/core_params.h"
#include "core/tolerance.h"
#include "reference/reference.h"

namespace ts {
namespace {

Case gemm_case(DType dt) {
  const Op& op = op_or_throw("gemm");
  return generate_case(op, Params::of(GemmParams{5, 7, 33}), dt, 42);
}

Verdict judge_with(std::function<void(const GemmParams&, TensorMap&)> kernel, DType dt = DType::F32,
                   bool determinism = false) {
  KernelTable k;
  k.add(ops::gemm, std::move(kernel));
  HostBackend b("test", std::move(k));
  return check_case(b, gemm_case(dt), determinism);
}

TEST(Harness, CorrectKernelPasses) {
  for (DType dt : kFloatDtypes) EXPECT_TRUE(judge_with(ref::gemm, dt).pass) << dtype_name(dt);
}

TEST(Harness, WrongValueFails) {
  const Verdict v = judge_with([](const GemmParams& p, TensorMap& t) {
    ref::gemm(p, t);
    Tensor& out = t.at("out");
    out.set(3, out.get(3) * 1.01);  // a 1% error in one element
  });
  ASSERT_FALSE(v.pass);
  EXPECT_EQ(v.outputs.at(0).report.bad, 1);
  EXPECT_EQ(v.outputs.at(0).report.worst, 3);
}

TEST(Harness, WritePastTheEndFails) {
  const Verdict v = judge_with([](const GemmParams& p, TensorMap& t) {
    ref::gemm(p, t);
    t.at("out").as<float>()[p.m * p.n] = 1.0f;  // one element past the output
  });
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.problem.find("guard zone"), std::string::npos) << v.problem;
}

TEST(Harness, WriteBeforeTheStartFails) {
  const Verdict v = judge_with([](const GemmParams& p, TensorMap& t) {
    ref::gemm(p, t);
    t.at("out").as<float>()[-1] = 1.0f;
  });
  EXPECT_FALSE(v.pass);
}

TEST(Harness, UnwrittenOutputFails) {
  // Outputs start poisoned with NaN, so an element the kernel forgets is a non-finite mismatch.
  const Verdict v = judge_with([](const GemmParams& p, TensorMap& t) {
    ref::gemm(p, t);
    t.at("out").set(p.m * p.n - 1, std::nan(""));
  });
  ASSERT_FALSE(v.pass);
  EXPECT_EQ(v.outputs.at(0).report.nonfinite_mismatch, 1);
}

// A kernel with a prepare step (weights repacked once, as the seed's load_quant) is judged like any
// other: its prepare runs once per launch, its run on every execute, and what the run computes from
// the prepared copy is what gets compared.
TEST(Harness, PreparedKernelRunsFromItsPreparedState) {
  int prepares = 0, runs = 0;
  KernelTable k;
  k.add_prepared(ops::gemm, [&](const GemmParams& p, TensorMap& t) -> HostRun {
    ++prepares;
    auto copy = std::make_shared<TensorMap>(t);  // the "repacked" weights: a copy made at prepare
    return [&, p, copy] {
      ++runs;
      ref::gemm(p, *copy);
      t.at("out") = copy->at("out");
    };
  });
  HostBackend b("test", std::move(k));
  EXPECT_TRUE(check_case(b, gemm_case(DType::F32), /*determinism=*/true).pass);
  EXPECT_GE(prepares, 1);
  EXPECT_EQ(runs, prepares) << "one execute per launch in check_case";
}

TEST(Harness, PreparedKernelWithAStaleCopyFails) {
  KernelTable k;
  k.add_prepared(ops::gemm, [](const GemmParams& p, TensorMap& t) -> HostRun {
    auto copy = std::make_shared<TensorMap>(t);
    copy->at("b").set(0, copy->at("b").get(0) + 1.0);  // a repack that gets one weight wrong
    return [p, copy, &t] {
      ref::gemm(p, *copy);
      t.at("out") = copy->at("out");
    };
  });
  HostBackend b("test", std::move(k));
  EXPECT_FALSE(check_case(b, gemm_case(DType::F32), false).pass);
}

TEST(Harness, NonDeterminismFails) {
  static std::atomic<int> calls{0};
  const Verdict v = judge_with(
      [](const GemmParams& p, TensorMap& t) {
        ref::gemm(p, t);
        if (calls++ % 2) t.at("out").set(0, t.at("out").get(0) + 1e-6);  // within tolerance, but not the same bits
      },
      DType::F32, /*determinism=*/true);
  ASSERT_FALSE(v.pass);
  EXPECT_NE(v.problem.find("non-deterministic"), std::string::npos) << v.problem;
}

TEST(Harness, ExactToleranceComparesBits) {
  Tensor a(DType::F32, {2}), b(DType::F32, {2});
  a.set(0, 0.0);
  b.set(0, -0.0);
  EXPECT_FALSE(compare(a, b, tol::exact()).pass());
  EXPECT_TRUE(compare(a, a, tol::exact()).pass());
}

TEST(Harness, NanOnlyWhereTheReferenceHasNan) {
  Tensor want(DType::F16, {3}), got(DType::F16, {3});
  want.set(1, std::nan(""));
  got.set(1, std::nan(""));
  const Tolerance t = tol::elementwise(DType::F16);
  EXPECT_TRUE(compare(want, got, t).pass());
  got.set(2, INFINITY);
  EXPECT_FALSE(compare(want, got, t).pass());
}

}  // namespace
}  // namespace ts
