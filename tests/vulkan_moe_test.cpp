// The moe family on Vulkan, beyond the conformance matrix (each test skips without a Vulkan driver):
//   - the fused gate + up + SiLU expert GEMV is its unfused chain on the device (gemv_quant_moe_id of
//     the gate stack and of the up stack, then silu_mul_stacked; the batched forms likewise), bit for
//     bit in F32: every variant is the one expert-GEMV core under another addressing view, so the
//     sums are the same and only the chain's extra kernel differs, computing the same silu_mul;
//   - routing, bucketing and the expert GEMM chained on the device (route_topk_softmax's ids into
//     compute_ids_tpe, its ids / tpe into gemm_quant_moe_id, each the device's own output, stale
//     slots past tpe[e] included) give the reference chain's ids, lists and outputs;
//   - the router ranks as the reference does where the cases' logits never go: -0 equal to +0 (the
//     lower id first), -inf a number, NaN after every number (the NaN rows place them at the highest
//     ids: the reference takes a NaN early when it is the lowest id not yet chosen, which its own
//     comment says it never does; the kernel ranks NaN last throughout);
//   - an expert stack above the device's storage-buffer range is one clear error, not a crash.
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/case_file.h"
#include "core/metrics.h"
#include "core/ops/moe_params.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

Backend* vulkan_or_skip() { return test::available_backend("vulkan"); }

// Runs op with params p on b over the tensors `from` supplies by name (the others allocated).
TensorMap run(Backend& b, const char* op_name, const Params& p, DType dt, const TensorMap& from) {
  const Op& op = op_or_throw(op_name);
  TensorMap io = allocate_from_decls(op.tensors(p, dt));
  for (auto& [name, t] : io)
    if (from.count(name)) t = from.at(name);
  run_case(b, op, p, io);
  return io;
}

void expect_same_bits(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.nbytes(), got.nbytes()) << what;
  EXPECT_EQ(std::memcmp(want.data(), got.data(), want.nbytes()), 0) << what;
}

const QuantKind kKinds[] = {QuantKind::Q4_0, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q6_K, QuantKind::F32};

// The fused op's case c against its chain on vk: gate and up through `gemv` (params gp) and `silu`
// (params sp) over their outputs, bit for bit in F32.
void expect_chain_bits(Backend& vk, const Case& c, const char* fused, const char* gemv, const Params& gp,
                       const char* silu, const Params& sp, const std::string& what) {
  const TensorMap out = run(vk, fused, c.params, DType::F32, c.tensors);
  TensorMap in = c.tensors;
  in["weights"] = c.tensors.at("gate_w");
  const TensorMap gate = run(vk, gemv, gp, DType::F32, in);
  in["weights"] = c.tensors.at("up_w");
  const TensorMap up = run(vk, gemv, gp, DType::F32, in);
  const TensorMap chain = run(vk, silu, sp, DType::F32, {{"gate", gate.at("out")}, {"up", up.at("out")}});
  expect_same_bits(chain.at("out"), out.at("silu_out"), what);
}

TEST(VulkanMoe, GateUpSiluIsItsChain) {
  Backend* vk = vulkan_or_skip();
  if (!vk) GTEST_SKIP() << "no Vulkan device here";
  uint64_t seed = 3;
  for (QuantKind kind : kKinds) {
    const int64_t cols = kind == QuantKind::F32 ? 40 : 256, rows = 9, n = 6;
    const MoeExperts w{kind, 8, rows, cols};
    const Params fp = Params::of(GemvQuantMoeIdGateUpSiluParams{w, n});
    expect_chain_bits(*vk, generate_case(op_or_throw("gemv_quant_moe_id_gate_up_silu"), fp, DType::F32, seed++),
                      "gemv_quant_moe_id_gate_up_silu", "gemv_quant_moe_id", Params::of(GemvQuantMoeIdParams{w, n, 0, cols}),
                      "silu_mul_stacked", Params::of(SiluMulStackedParams{n, rows}),
                      fmt::format("gate_up_silu {}", enum_name(kind)));
  }
}

TEST(VulkanMoe, GateUpSiluBatchedIsItsChain) {
  Backend* vk = vulkan_or_skip();
  if (!vk) GTEST_SKIP() << "no Vulkan device here";
  uint64_t seed = 7;
  for (QuantKind kind : kKinds) {
    const int64_t cols = kind == QuantKind::F32 ? 40 : 256, m = 3, top_k = 2;
    // Each pair its own row (outer top_k rows, inner one row): the down projection's addressing.
    const Params p = Params::of(
        GemvQuantMoeIdBatchedParams{{kind, 8, 5, cols}, m, top_k, top_k * cols, cols, m * top_k * cols});
    expect_chain_bits(*vk, generate_case(op_or_throw("gemv_quant_moe_id_gate_up_silu_batched"), p, DType::F32, seed++),
                      "gemv_quant_moe_id_gate_up_silu_batched", "gemv_quant_moe_id_batched", p, "silu_mul_batched",
                      Params::of(SiluMulBatchedParams{m * top_k, 5}), fmt::format("gate_up_silu_batched {}", enum_name(kind)));
  }
}

TEST(VulkanMoe, RoutingChainOnTheDeviceIsTheReferenceChain) {
  Backend* vk = vulkan_or_skip();
  if (!vk) GTEST_SKIP() << "no Vulkan device here";
  Backend& ref = backend("reference");
  const int64_t batch = 9, experts = 16, top_k = 4, pairs = batch * top_k;
  const Params rp = Params::of(RouteTopkSoftmaxParams{batch, experts, top_k, true});
  const Case logits = generate_case(op_or_throw("route_topk_softmax"), rp, DType::F32, 21);
  const TensorMap route = run(*vk, "route_topk_softmax", rp, DType::F32, logits.tensors);
  expect_same_bits(run(ref, "route_topk_softmax", rp, DType::F32, logits.tensors).at("out_ids"), route.at("out_ids"),
                   "route_topk_softmax out_ids");

  const Params bp = Params::of(ComputeIdsTpeParams{batch, experts, top_k});
  const TensorMap bucket = run(*vk, "compute_ids_tpe", bp, DType::F32, {{"selected_ids", route.at("out_ids")}});
  const TensorMap want_bucket = run(ref, "compute_ids_tpe", bp, DType::F32, {{"selected_ids", route.at("out_ids")}});
  expect_same_bits(want_bucket.at("tpe"), bucket.at("tpe"), "compute_ids_tpe tpe");
  const int32_t* tpe = bucket.at("tpe").as<int32_t>();
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t i = 0; i < tpe[e]; ++i)
      EXPECT_EQ(bucket.at("ids").as<int32_t>()[e * pairs + i], want_bucket.at("ids").as<int32_t>()[e * pairs + i])
          << "ids[" << e << ", " << i << "]";

  // The device's lists as they are: the slots past tpe[e] hold what the bucket kernel left there.
  const GemmQuantMoeIdParams gp{{QuantKind::Q4_K, experts, 8, 256}, 1, top_k, pairs, batch};
  const Op& gemm = op_or_throw("gemm_quant_moe_id");
  TensorMap in = generate_case(gemm, Params::of(gp), DType::F32, 22).tensors;
  in["ids"] = bucket.at("ids");
  in["tpe"] = bucket.at("tpe");
  const TensorMap got = run(*vk, "gemm_quant_moe_id", Params::of(gp), DType::F32, in);
  const TensorMap want = run(ref, "gemm_quant_moe_id", Params::of(gp), DType::F32, in);
  const Tolerance tol = gemm.tolerance(Params::of(gp), DType::F32, "out", in);
  const ErrorReport r = compare(want.at("out"), got.at("out"), tol);
  EXPECT_TRUE(r.pass()) << r.summary() << " (" << tol.str() << ")";
}

TEST(VulkanMoe, RouterRanksNanAndSignedZerosAsTheReference) {
  Backend* vk = vulkan_or_skip();
  if (!vk) GTEST_SKIP() << "no Vulkan device here";
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<std::vector<float>> rows = {
      {0.0f, -0.0f, -2.0f, 1.5f, -0.0f, 0.0f, 4.0f, 1.5f, -2.0f, 0.0f},
      {nan, nan, nan, nan, nan, nan, nan, nan, nan, nan},
      {-inf, 3.0f, -inf, -0.0f, 3.0f, -1.0f, -inf, 0.5f, nan, nan},
      {-0.0f, -0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, -0.0f, 0.0f, -0.0f},
  };
  const int64_t experts = 10;
  for (int64_t top_k : {3, 10}) {
    const Params p = Params::of(RouteTopkSoftmaxParams{int64_t(rows.size()), experts, top_k, true});
    Tensor logits(DType::F32, {int64_t(rows.size()), experts});
    for (size_t r = 0; r < rows.size(); ++r)
      std::memcpy(logits.as<float>() + r * experts, rows[r].data(), experts * sizeof(float));
    const TensorMap got = run(*vk, "route_topk_softmax", p, DType::F32, {{"logits", logits}});
    const TensorMap want = run(backend("reference"), "route_topk_softmax", p, DType::F32, {{"logits", logits}});
    expect_same_bits(want.at("out_ids"), got.at("out_ids"), fmt::format("out_ids, top_k {}", top_k));
    const Tolerance tol = op_or_throw("route_topk_softmax").tolerance(p, DType::F32, "out_weights", {{"logits", logits}});
    const ErrorReport r = compare(want.at("out_weights"), got.at("out_weights"), tol);
    EXPECT_TRUE(r.pass()) << "top_k " << top_k << ": " << r.summary() << " (" << tol.str() << ")";
  }
}

TEST(VulkanMoe, StackAboveTheStorageRangeIsOneError) {
  Backend* vk = vulkan_or_skip();
  if (!vk) GTEST_SKIP() << "no Vulkan device here";
  const GemvQuantMoeIdParams p{{QuantKind::Q8_0, 8, 16, 256}, 2, 0, 256};  // 8 x 16 rows of 272 bytes
  const Case c = generate_case(op_or_throw("gemv_quant_moe_id"), Params::of(p), DType::F32, 5);
  // The backend reads the limit at each launch; TOUCHSTONE_VULKAN_MAX_RANGE lowers it as if the device had less.
  struct Limit {
    Limit() { ::setenv("TOUCHSTONE_VULKAN_MAX_RANGE", "16384", 1); }
    ~Limit() { ::unsetenv("TOUCHSTONE_VULKAN_MAX_RANGE"); }
  } limit;
  try {
    run(*vk, "gemv_quant_moe_id", Params::of(p), DType::F32, c.tensors);
    ADD_FAILURE() << "a 34816-byte stack ran under a 16384-byte storage-buffer range";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("expert stack 'weights'"), std::string::npos) << m;
    EXPECT_NE(m.find("maxStorageBufferRange"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "not one line: " << m;
  }
}

}  // namespace
}  // namespace ts
