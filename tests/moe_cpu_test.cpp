// The cpu's expert-GEMV engine (cpu/moe/moe_experts.h) against the quant family it is built on, and its
// exact fallback:
//   - an expert GEMV pair is gemm_quant's decode GEMV of that expert's weights, bit for bit, in every
//     GGUF kind, on the int8 path (many pairs per expert, own rows and one broadcast row): the engine
//     reuses the family's dots and activation quantization rather than copying them;
//   - a non-finite activation row sends every pair to the exact dot: its pair's outputs are NaN, the
//     others within the op's own (exact) tolerance of the reference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
#include "tests/available_backend.h"
#include "core/ops/moe_params.h"
#include "core/ops/quant_params.h"
#include "core/quant/formats.h"

namespace ts {
namespace {

Backend* cpu_or_skip() { return test::available_backend("cpu"); }

// gemm_quant of one activation row against expert e's rows of the stack, on the cpu.
Tensor expert_gemv(Backend& cpu, const GemvQuantMoeIdParams& p, const TensorMap& moe, int64_t e, int64_t a_at, DType dt) {
  const Op& op = op_or_throw("gemm_quant");
  const GemmQuantParams gp{p.w.kind, 1, p.w.n_rows, p.w.n_cols};
  TensorMap io = allocate_from_decls(op.tensors(Params::of(gp), dt));
  const Tensor& a = moe.at("a");
  const size_t es = dtype_size(dt);
  std::memcpy(io.at("a").data(), a.data() + a_at * static_cast<int64_t>(es), static_cast<size_t>(p.w.n_cols) * es);
  const Tensor& w = moe.at("weights");
  const size_t expert_bytes = w.nbytes() / static_cast<size_t>(p.w.num_experts);
  std::memcpy(io.at("weight").data(), w.data() + static_cast<size_t>(e) * expert_bytes, expert_bytes);
  run_case(cpu, op, Params::of(gp), io);
  EXPECT_EQ(cpu.tolerance(make_problem(op, Params::of(gp), dt), "out", io).value_or(Tolerance{}).metric, Metric::Nmse)
      << "gemm_quant is not on its int8 path";
  return io.at("out");
}

TEST(CpuMoe, ExpertGemvIsGemmQuantOfTheExpert) {
  Backend* cpu = cpu_or_skip();
  if (!cpu) GTEST_SKIP() << "no cpu backend here";
  const Op& op = op_or_throw("gemv_quant_moe_id");
  using enum QuantKind;
  uint64_t seed = 1;
  for (QuantKind kind : {Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K})
    for (int64_t stride : {0, 512 + 3}) {
      // 11 pairs on 8 experts (repeats, the skewed router's pile on experts 0 and 1), 72 rows each.
      const int64_t n = 11, cols = 512;
      const GemvQuantMoeIdParams p{{kind, 8, 72, cols}, n, stride, (n - 1) * stride + cols};
      const DType dt = seed % 3 == 0 ? DType::BF16 : seed % 3 == 1 ? DType::F32 : DType::F16;
      const Case c = generate_case(op, Params::of(p), dt, seed++);
      const std::optional<Tolerance> tol = cpu->tolerance(make_problem(op, Params::of(p), dt), "out", c.tensors);
      ASSERT_TRUE(tol && tol->metric == Metric::Nmse) << enum_name(kind) << ": not on the int8 path";
      TensorMap io = c.tensors;
      run_case(*cpu, op, Params::of(p), io);
      const int32_t* ids = io.at("ids").as<int32_t>();
      for (int64_t i = 0; i < n; ++i) {
        const Tensor want = expert_gemv(*cpu, p, io, ids[i], i * stride, dt);
        const Tensor& got = io.at("out");
        EXPECT_EQ(std::memcmp(got.data() + i * want.nbytes(), want.data(), want.nbytes()), 0)
            << enum_name(kind) << " stride " << stride << " pair " << i << " (expert " << ids[i] << ")";
      }
    }
}

TEST(CpuMoe, NonFiniteActivationTakesTheExactPath) {
  Backend* cpu = cpu_or_skip();
  if (!cpu) GTEST_SKIP() << "no cpu backend here";
  const Op& op = op_or_throw("gemv_quant_moe_id");
  for (QuantKind kind : {QuantKind::Q8_0, QuantKind::Q4_K}) {
    const int64_t n = 6, cols = 256, rows = 40;
    const GemvQuantMoeIdParams p{{kind, 8, rows, cols}, n, cols, n * cols};
    Case c = generate_case(op, Params::of(p), DType::F32, 5);
    c.tensors.at("a").as<float>()[17] = std::numeric_limits<float>::quiet_NaN();  // pair 0's row only
    TensorMap got = c.tensors, want = c.tensors;
    run_case(*cpu, op, Params::of(p), got);
    run_case(backend("reference"), op, Params::of(p), want);
    const Tolerance tol = op.tolerance(Params::of(p), DType::F32, c.tensors);
    const float* g = got.at("out").as<float>();
    const float* w = want.at("out").as<float>();
    for (int64_t r = 0; r < rows; ++r) EXPECT_TRUE(std::isnan(g[r])) << enum_name(kind) << " pair 0 row " << r;
    int bad = 0;
    for (int64_t i = rows; i < n * rows; ++i)
      if (!(std::abs(g[i] - w[i]) <= tol.atol + tol.rtol * std::abs(w[i])) && bad++ < 5)
        ADD_FAILURE() << enum_name(kind) << " out[" << i << "] = " << g[i] << ", reference " << w[i] << " (" << tol.str()
                      << ")";
  }
}

}  // namespace
}  // namespace ts
