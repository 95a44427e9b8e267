// The moe family's expert GEMV / GEMM: the fused gate + up + SiLU held equal to its chain (two
// gemv_quant_moe_id runs and silu * up computed here) on every backend, and bad input refused with
// one-line errors.
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/moe/experts_common.h"
#include "core/ops/moe_params.h"
#include "tests/expect_error.h"

namespace ts {
namespace {

// One GEMV of the chain: `weights` against the fused case's a and ids, on backend b.
// The GEMV's tensors for one factor of the fused case: its a, ids and the stack `weights`.
TensorMap chain_inputs(const Case& fused, const Params& gemv_params, const Op& gemv_op, const std::string& weights) {
  TensorMap io = allocate_from_decls(gemv_op.tensors(gemv_params, fused.dtype));
  io.at("a") = fused.tensors.at("a");
  io.at("weights") = fused.tensors.at(weights);
  io.at("ids") = fused.tensors.at("ids");
  return io;
}

Tensor chain_gemv(Backend& b, const Case& fused, const std::string& weights, const MoeExperts& w, int64_t n_pairs,
                  const Params& gemv_params, const Op& gemv_op) {
  TensorMap io = chain_inputs(fused, gemv_params, gemv_op, weights);
  run_case(b, gemv_op, gemv_params, io);
  EXPECT_EQ(io.at("out").numel(), n_pairs * w.n_rows);
  return io.at("out");
}

// fused silu_out against silu(g) * u of the chain's rounded g and u: each output within the fused
// tolerance plus the chain's own error (its GEMV tolerance on g and u, through silu' <= 1.1 and the
// other factor).
void expect_chain(const Tensor& fused, const Tensor& g, const Tensor& u, const Tolerance& tf, const Tolerance& tg,
                  const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < fused.numel(); ++i) {
    const double gv = g.get(i), uv = u.get(i), f = fused.get(i);
    const double want = gv / (1.0 + std::exp(-gv)) * uv;
    const double eg = tg.atol + tg.rtol * std::abs(gv), eu = tg.atol + tg.rtol * std::abs(uv);
    const double bound = tf.atol + tf.rtol * std::abs(want) + 1.1 * eg * (std::abs(uv) + eu) + std::abs(gv) * eu;
    if (!(std::abs(f - want) <= bound) && bad++ < 5)
      ADD_FAILURE() << what << " [" << i << "]: fused " << f << ", chain " << want << ", bound " << bound;
  }
}

class FusedChain : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedChain, GateUpSiluIsItsChain) {
  Backend& b = backend(GetParam());
  const Availability av = b.availability();
  if (!av.ok) GTEST_SKIP() << GetParam() << " unavailable: " << av.detail;
  int judged = 0;
  for (const std::string fused_name : {"gemv_quant_moe_id_gate_up_silu", "gemv_quant_moe_id_gate_up_silu_batched"}) {
    const Op& fused_op = op_or_throw(fused_name);
    const bool is_batched = fused_name.ends_with("_batched");
    const Op& gemv_op = op_or_throw(is_batched ? "gemv_quant_moe_id_batched" : "gemv_quant_moe_id");
    for (const CaseSpec& cs : fused_op.cases())
      for (DType dt : cs.dtypes) {
        const Case c = generate_case(fused_op, cs.params, dt, 11);
        Params gp;
        MoeExperts w;
        int64_t n_pairs = 0;
        if (is_batched) {
          const auto& p = cs.params.as<GemvQuantMoeIdBatchedParams>();
          gp = cs.params, w = p.w, n_pairs = p.m * p.top_k;
        } else {
          const auto& p = cs.params.as<GemvQuantMoeIdGateUpSiluParams>();
          gp = Params::of(GemvQuantMoeIdParams{p.w, p.n_selected, 0, p.w.n_cols}), w = p.w, n_pairs = p.n_selected;
        }
        if (!b.supports(c).ok || !b.supports(make_problem(gemv_op, gp, dt)).ok) continue;
        ++judged;
        TensorMap io = c.tensors;
        run_case(b, fused_op, cs.params, io);
        const Tensor g = chain_gemv(b, c, "gate_w", w, n_pairs, gp, gemv_op);
        const Tensor u = chain_gemv(b, c, "up_w", w, n_pairs, gp, gemv_op);
        // The chain's GEMV tolerance: the larger of the gate's and the up's (their weights differ).
        const Tolerance tg = gemv_op.tolerance(gp, dt, chain_inputs(c, gp, gemv_op, "gate_w"));
        const Tolerance tu = gemv_op.tolerance(gp, dt, chain_inputs(c, gp, gemv_op, "up_w"));
        expect_chain(io.at("silu_out"), g, u, fused_op.tolerance(cs.params, dt, c.tensors), tg.atol >= tu.atol ? tg : tu,
                     fmt::format("{} {} {} {}", GetParam(), fused_name, cs.name, dtype_name(dt)));
      }
  }
  if (judged == 0) GTEST_SKIP() << GetParam() << " runs neither fused op";
}

INSTANTIATE_TEST_SUITE_P(Backends, FusedChain, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

// A valid case of `op` (its first case), edited by `edit`, must be refused with `needle`.
template <class P> void expect_refused(const char* op_name, const std::function<void(P&, TensorMap&)>& edit,
                                       const std::string& needle) {
  const Op& op = op_or_throw(op_name);
  P p = op.cases().front().params.as<P>();
  Case c = generate_case(op, Params::of(p), DType::F32, 3);
  edit(p, c.tensors);
  expect_error([&] { op.validate(Params::of(p), c.tensors); }, needle);
}

TEST(MoeExpertsBadInput, ExpertIdOutOfRange) {
  expect_refused<GemvQuantMoeIdParams>("gemv_quant_moe_id", [](auto& p, TensorMap& t) {
    t.at("ids").as<int32_t>()[1] = static_cast<int32_t>(p.w.num_experts);
  }, "ids[1] = 8 is not an expert");
  expect_refused<GemvQuantMoeIdBatchedParams>("gemv_quant_moe_id_batched", [](auto&, TensorMap& t) {
    t.at("ids").as<int32_t>()[0] = -1;
  }, "ids[0] = -1 is not an expert");
}

TEST(MoeExpertsBadInput, GemmLists) {
  using P = GemmQuantMoeIdParams;
  expect_refused<P>("gemm_quant_moe_id", [](P& p, TensorMap& t) {
    int32_t* tpe = t.at("tpe").as<int32_t>();
    int e = 0;
    while (tpe[e] == 0) ++e;
    t.at("ids").as<int32_t>()[e * p.max_per_expert] = static_cast<int32_t>(p.batch * p.top_k);
  }, "is not a pair id");
  expect_refused<P>("gemm_quant_moe_id", [](P& p, TensorMap& t) {
    t.at("tpe").as<int32_t>()[0] = static_cast<int32_t>(p.max_per_expert + 1);
  }, "must be in [0, max_per_expert");
  expect_refused<P>("gemm_quant_moe_id_indirect", [](P& p, TensorMap& t) {
    int32_t* tpe = t.at("tpe").as<int32_t>();
    for (int64_t e = 0; e < p.w.num_experts; ++e) tpe[e] = static_cast<int32_t>(p.max_per_expert);
  }, "tpe sums past the pair count");
  expect_refused<P>("gemm_quant_moe_id", [](P& p, TensorMap&) { p.top_k = p.w.num_experts + 1; },
                    "larger than num_experts");
}

TEST(MoeExpertsBadInput, StridesAndOffsets) {
  expect_refused<GemvQuantMoeIdParams>("gemv_quant_moe_id", [](auto& p, TensorMap&) { p.src1_stride = p.w.n_cols - 1; },
                                       "'src1_stride'");
  expect_refused<GemvQuantMoeIdBatchedParams>("gemv_quant_moe_id_gate_up_silu_batched",
                                              [](auto& p, TensorMap&) { p.src1_inner_stride = 1; }, "'src1_inner_stride'");
  expect_refused<GemvQuantMoeIdOffsetParams>("gemv_quant_moe_id_offset", [](auto& p, TensorMap&) { p.a_offset = p.a_len; },
                                             "past the end of a");
  expect_refused<GemvQuantMoeIdOffsetParams>("gemv_quant_moe_id_offset",
                                             [](auto& p, TensorMap&) { p.ids_offset = p.ids_len; }, "past the end of ids");
}

TEST(MoeExpertsBadInput, WeightBytesAndKind) {
  const Op& op = op_or_throw("gemv_quant_moe_id");
  auto p = op.cases().front().params.as<GemvQuantMoeIdParams>();  // Q4_0
  Case c = generate_case(op, Params::of(p), DType::F32, 3);
  ParamMap m = op.to_map(Params::of(p));
  m["kind"] = "Q8_0";  // the bytes are Q4_0's
  expect_error([&] { op.parse(m, &c.tensors); }, "expert rows of");
  m["kind"] = "F16";  // plain weights must be in the case dtype (F32 here)
  c.tensors.at("weights") = Tensor(DType::F16, {p.w.num_experts, p.w.n_rows, p.w.n_cols});
  expect_error([&] { op.validate(op.parse(m, &c.tensors), c.tensors); }, "names plain weights in the case dtype");
}

}  // namespace
}  // namespace ts
