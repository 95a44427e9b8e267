// The cpu backend's int8 decode GEMV of gemm_gptq and gemm_awq (weights repacked into tiles at
// prepare, cpu/quant/gptq_tiles.h). The conformance cases reach it only at the full tier (their CI decode
// cases have too few outputs for its NMSE bound and take the exact path), so here: every activation
// row count it specializes (m = 1..4), column counts that leave a partial tile, both code widths, the
// group sizes, act-order, AWQ, the three activation dtypes, each against the reference within the
// backend's own derived tolerance and run twice for bit-identical results. Activations that are not
// finite take the exact path: NaN and Inf where the reference has them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
#include "tests/available_backend.h"
#include "core/ops/quant_params.h"

namespace ts {
namespace {

Backend* cpu_or_skip() { return test::available_backend("cpu"); }

// Runs c on the cpu backend, first checking that it takes the int8 path (the backend states its own
// NMSE tolerance for exactly those cases).
void expect_int8_pass(Backend& cpu, const Case& c, const std::string& name) {
  const Problem pr = problem_of(*c.op, c.params, c.tensors);
  const std::optional<Tolerance> tol = cpu.tolerance(pr, "out", c.tensors);
  ASSERT_TRUE(tol && tol->metric == Metric::Nmse) << name << ": not on the int8 path";
  const Verdict v = check_case(cpu, c, true);
  EXPECT_TRUE(v.pass) << name << "\n" << v.describe(true);
}

TEST(CpuGptqAwqDecode, GptqMatchesReference) {
  Backend* cpu = cpu_or_skip();
  if (!cpu) GTEST_SKIP() << "no cpu backend here";
  const Op& op = op_or_throw("gemm_gptq");
  uint64_t seed = 1;
  for (int64_t bits : {4, 8})
    for (int64_t gs : {32, 128})
      for (bool act : {false, true})
        for (int64_t m : {1, 2, 3, 4})
          for (int64_t n : {72, 200}) {
            const DType dt = seed % 5 == 1 ? DType::F16 : seed % 5 == 3 ? DType::BF16 : DType::F32;
            const Case c = generate_case(op, Params::of(GptqParams{bits, gs, m, 512, n, act}), dt, seed++);
            expect_int8_pass(*cpu, c, fmt::format("b{}_g{}{}_m{}_n{} {}", bits, gs, act ? "_act" : "", m, n, dtype_name(dt)));
          }
}

TEST(CpuGptqAwqDecode, AwqMatchesReference) {
  Backend* cpu = cpu_or_skip();
  if (!cpu) GTEST_SKIP() << "no cpu backend here";
  const Op& op = op_or_throw("gemm_awq");
  uint64_t seed = 100;
  for (int64_t gs : {32, 64, 128})
    for (int64_t m : {1, 2, 3, 4})
      for (int64_t n : {64, 136}) {
        const DType dt = seed % 3 == 0 ? DType::F16 : seed % 3 == 1 ? DType::BF16 : DType::F32;
        const Case c = generate_case(op, Params::of(AwqParams{4, gs, m, 384, n}), dt, seed++);
        expect_int8_pass(*cpu, c, fmt::format("g{}_m{}_n{} {}", gs, m, n, dtype_name(dt)));
      }
}

// Act-order groups of unequal sizes (any g_idx in [0, G) is valid): runs padded to whole blocks of
// 32, and a group with no rows at all.
TEST(CpuGptqAwqDecode, UnevenActOrderGroups) {
  Backend* cpu = cpu_or_skip();
  if (!cpu) GTEST_SKIP() << "no cpu backend here";
  const Op& op = op_or_throw("gemm_gptq");
  for (int64_t bits : {4, 8}) {
    const GptqParams p{bits, 32, 2, 256, 96, true};  // 8 groups
    Case c = generate_case(op, Params::of(p), DType::F32, 7);
    std::vector<double> g(static_cast<size_t>(p.k));
    for (int64_t r = 0; r < p.k; ++r) g[static_cast<size_t>(r)] = static_cast<double>((r * 7 % 11) % 7);  // group 7 empty
    from_f64(c.tensors.at("g_idx"), g);
    TensorMap io = c.tensors;
    run_case(backend("reference"), op, c.params, io);
    c.expected.at("out") = io.at("out");
    expect_int8_pass(*cpu, c, fmt::format("b{} uneven groups", bits));
  }
}

// Groups shorter than a block of 32 rows (each run padded to one), with and without act-order.
TEST(CpuGptqAwqDecode, SmallGroups) {
  Backend* cpu = cpu_or_skip();
  if (!cpu) GTEST_SKIP() << "no cpu backend here";
  const Op& op = op_or_throw("gemm_gptq");
  for (const GptqParams& p : {GptqParams{4, 8, 1, 40, 64, false}, GptqParams{4, 8, 3, 40, 72, true},
                              GptqParams{8, 4, 2, 20, 64, true}, GptqParams{8, 4, 1, 20, 96, false}}) {
    const Case c = generate_case(op, Params::of(p), DType::F32, 13);
    expect_int8_pass(*cpu, c, fmt::format("b{}_g{}_m{}_k{}_n{}{}", p.bits, p.group_size, p.m, p.k, p.n, p.desc_act ? "_act" : ""));
  }
}

TEST(CpuGptqAwqDecode, NonFiniteActivationsTakeTheExactPath) {
  Backend* cpu = cpu_or_skip();
  if (!cpu) GTEST_SKIP() << "no cpu backend here";
  const Op& op = op_or_throw("gemm_gptq");
  for (bool act : {false, true}) {
    const GptqParams p{4, 64, 2, 256, 96, act};
    Case c = generate_case(op, Params::of(p), DType::F32, 11);
    std::vector<double> a = to_f64(c.tensors.at("a"));
    a[5] = std::numeric_limits<double>::quiet_NaN();                // row 0: NaN everywhere
    a[static_cast<size_t>(p.k + 9)] = std::numeric_limits<double>::infinity();  // row 1: +-Inf or NaN
    from_f64(c.tensors.at("a"), a);
    TensorMap io = c.tensors;
    run_case(backend("reference"), op, c.params, io);
    c.expected.at("out") = io.at("out");
    const Verdict v = check_case(*cpu, c, false);
    EXPECT_TRUE(v.pass) << (act ? "act-order" : "in order") << "\n" << v.describe(true);
  }
}

}  // namespace
}  // namespace ts
