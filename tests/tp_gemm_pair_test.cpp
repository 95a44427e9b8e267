// The tensor-parallel gemm pair (tp_gemm_pair) in one process: every backend's pair over a world of
// one rank against the one-rank reference; the pair's derived tolerance, printed with its derivation,
// passing the sum of the ranks' own partial products and failing an error above it, a rank's partial
// alone (a missing all_reduce) and swapped shards; the bad input as one line. The pair over real ranks
// runs in the collective slice under mpiexec (conformance) and through the CLI (collective/cli/tp_pair).
#include <cmath>
#include <iostream>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/backend.h"
#include "core/case_file.h"
#include "core/collective.h"
#include "reference/reference.h"
#include "tests/available_backend.h"
#include "tests/expect_error.h"
#include "reference/kernels.h"

namespace ts {
namespace {

const Op& pair_op() { return op_or_throw("tp_gemm_pair"); }

Case pair_case(TensorParallelGemmParams p, DType dt, uint64_t seed = 5) {
  Case c = generate_case(pair_op(), Params::of(p), dt, seed);
  TensorMap t = c.tensors;
  ref::run(pair_op(), c.params, t);
  for (int64_t r = 0; r < p.world_size; ++r) c.expected[rank_tensor("out", r)] = t.at(rank_tensor("out", r));
  return c;
}

// Rank r's partial product P_r = (x a.r^T) b.{rb}^T through the reference's gemm, in double, unrounded
// between the steps but for Y (rounded to the case's dtype as a backend's first gemm output is).
std::vector<double> partial(const Case& c, const TensorParallelGemmParams& p, int64_t ra, int64_t rb) {
  const int64_t h = p.shard();
  TensorMap first{{"a", c.tensors.at("x")}, {"b", c.tensors.at(rank_tensor("a", ra))},
                  {"out", Tensor(c.dtype, {p.m, h})}};
  ref::gemm(GemmParams{p.m, h, p.k}, first);
  const Tensor& y = first.at("out");
  const Tensor& b = c.tensors.at(rank_tensor("b", rb));
  std::vector<double> out(static_cast<size_t>(p.m * p.n));
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t l = 0; l < p.n; ++l) {
      double acc = 0;
      for (int64_t j = 0; j < h; ++j) acc += y.get(i * h + j) * b.get(l * h + j);
      out[static_cast<size_t>(i * p.n + l)] = acc;
    }
  return out;
}

// `values` as every rank's output, judged against the case.
Verdict judge_as_every_rank(const Case& c, const TensorParallelGemmParams& p, const std::vector<double>& values) {
  TensorMap got;
  for (int64_t r = 0; r < p.world_size; ++r) {
    Tensor t(c.dtype, {p.m, p.n});
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, values[static_cast<size_t>(i)]);
    got.emplace(rank_tensor("out", r), std::move(t));
  }
  return judge_outputs(c, views(got));
}

TEST(TensorParallelPair, EveryBackendMatchesTheOneRankPairOnOneRank) {
  ASSERT_EQ(world().size(), 1);
  int judged = 0;
  for (const std::string& name : backend_names()) {
    Backend* b = test::available_backend(name);
    if (!b) continue;
    for (DType dt : kFloatDtypes)
      for (const TensorParallelGemmParams& p : {TensorParallelGemmParams{1, 5, 67, 8, 33},
                                                TensorParallelGemmParams{1, 1, 128, 32, 96}}) {
        const Case c = pair_case(p, dt);
        const Support s = b->supports(c);
        if (!s.ok) {
          std::cout << name << " " << dtype_name(dt) << ": unsupported: " << s.reason << "\n";
          continue;
        }
        const Verdict v = check_case(*b, c, false);
        EXPECT_TRUE(v.pass) << name << " " << dtype_name(dt) << "\n" << v.describe(true);
        ++judged;
      }
  }
  EXPECT_GE(judged, 6);  // the reference and the cpu at least, every dtype
}

TEST(TensorParallelPair, ToleranceIsDerivedFromTheCaseAndCatchesErrors) {
  for (DType dt : kFloatDtypes)
    for (const TensorParallelGemmParams& p : {TensorParallelGemmParams{2, 5, 67, 16, 33},
                                              TensorParallelGemmParams{4, 3, 128, 64, 40}}) {
      const std::string what = fmt::format("w{} {}", p.world_size, dtype_name(dt));
      const Case c = pair_case(p, dt);
      const Tolerance tol = pair_op().tolerance(c.params, dt, "out.0", c.tensors);
      std::cout << what << ": " << tol.str() << "\n";
      EXPECT_NE(tol.why.find(fmt::format("tensor-parallel pair over {} ranks", p.world_size)), std::string::npos);
      EXPECT_GT(tol.atol, 0);

      // The ranks' own partial products summed (what the ranks compute, with exact arithmetic after Y):
      // within the bound.
      std::vector<double> sum(static_cast<size_t>(p.m * p.n), 0.0);
      for (int64_t r = 0; r < p.world_size; ++r) {
        const std::vector<double> pr = partial(c, p, r, r);
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += pr[i];
      }
      EXPECT_TRUE(judge_as_every_rank(c, p, sum).pass) << what;

      // The largest output moved by 1.5 x the bound there fails; by half the bound it passes (the judge
      // applies this bound, no other).
      const Tensor& want = c.expected.at("out.0");
      int64_t big = 0;
      for (int64_t i = 0; i < want.numel(); ++i)
        if (std::fabs(want.get(i)) > std::fabs(want.get(big))) big = i;
      const double w = want.get(big), bound = tol.atol + tol.rtol * std::fabs(w);
      for (const auto& [factor, passes] : {std::pair{1.5, false}, std::pair{0.5, true}}) {
        std::vector<double> moved(static_cast<size_t>(want.numel()));
        for (int64_t i = 0; i < want.numel(); ++i) moved[static_cast<size_t>(i)] = want.get(i);
        // Rounded into the dtype the output lands in: the move must survive it (F16 and BF16 steps).
        moved[static_cast<size_t>(big)] = w + std::copysign(factor * bound, w);
        Tensor check(dt, {1});
        check.set(0, moved[static_cast<size_t>(big)]);
        const double landed = std::fabs(check.get(0) - w);
        if (passes ? landed > bound : landed <= bound) continue;  // the dtype's step swallowed the move
        EXPECT_EQ(judge_as_every_rank(c, p, moved).pass, passes) << what << " moved by " << factor << " x " << bound;
      }

      // A rank's partial alone (the all_reduce left out) and the ranks' second weights swapped fail.
      EXPECT_FALSE(judge_as_every_rank(c, p, partial(c, p, 0, 0)).pass) << what << ": rank 0's partial alone";
      std::vector<double> swapped(sum.size(), 0.0);
      for (int64_t r = 0; r < p.world_size; ++r) {
        const std::vector<double> pr = partial(c, p, r, (r + 1) % p.world_size);
        for (size_t i = 0; i < swapped.size(); ++i) swapped[i] += pr[i];
      }
      EXPECT_FALSE(judge_as_every_rank(c, p, swapped).pass) << what << ": b's shards swapped";
    }
}

TEST(TensorParallelPair, BadInputIsOneLine) {
  ParamMap m = {{"world_size", "4"}, {"m", "2"}, {"k", "3"}, {"hidden", "30"}, {"n", "5"}};
  expect_error([&] { pair_op().parse(m); }, "parameter 'hidden' is 30, not a multiple of world_size 4");
  m["hidden"] = "0";
  expect_error([&] { pair_op().parse(m); }, "parameter 'hidden' must be positive");
  m = {{"world_size", "2"}, {"m", "4611686018427387904"}, {"k", "3"}, {"hidden", "2"}, {"n", "5"}};
  expect_error([&] { pair_op().parse(m); }, "overflows");
  // A case over 2 ranks in a world of one: refused before any data moves, and skipped by the matrix.
  const Case c = pair_case({2, 1, 1, 2, 1}, DType::F32);
  expect_error([&] { agree_on_case(c); }, "the case's world_size is 2, but 1 rank is running (mpiexec -n 2 runs it)");
  Backend* cpu = test::available_backend("cpu");
  if (!cpu) GTEST_SKIP() << "cpu unavailable";
  const Support s = cpu->supports(c);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("mpiexec -n 2"), std::string::npos) << s.reason;
}

}  // namespace
}  // namespace ts
