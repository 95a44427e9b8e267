// The moe family on the OpenCL device, beyond the matrix's one-op cases:
//   - the routing chain as a model runs it: route_topk_softmax -> compute_ids_tpe -> gemm_quant_moe_id,
//     each op fed the previous op's opencl outputs as they came back (ids past tpe[e] hold whatever
//     compute_ids_tpe left there: the GEMM must not read them), held against the reference's chain: the
//     ids and tpe exactly, the GEMM within its own tolerance;
//   - an expert GEMV pair is opencl's gemm_quant decode GEMV of that expert's weights, bit for bit, in
//     every GGUF kind: the MoE kernel and the dense one share one dot product (kernels/gemv_core.h).
// Both skip cleanly where the build or the machine has no OpenCL driver.
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/moe_params.h"
#include "core/ops/quant_params.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

struct Chain {
  TensorMap route, bucket, gemm;
};

// The three ops on backend b, each from the one before; the GEMM's activations and weights from `gemm`.
Chain run_chain(Backend& b, const RouteTopkSoftmaxParams& rp, const GemmQuantMoeIdParams& gp, const Case& gemm,
                const Tensor& logits) {
  Chain c;
  const Op& route = op_or_throw("route_topk_softmax");
  const Op& bucket = op_or_throw("compute_ids_tpe");
  const Op& gemm_op = op_or_throw("gemm_quant_moe_id");
  c.route = allocate_from_decls(route.tensors(Params::of(rp), logits.dtype()));
  c.route.at("logits") = logits;
  run_case(b, route, Params::of(rp), c.route);

  const ComputeIdsTpeParams bp{rp.batch, rp.num_experts, rp.top_k};
  c.bucket = allocate_from_decls(bucket.tensors(Params::of(bp), DType::F32));
  c.bucket.at("selected_ids") = c.route.at("out_ids");
  run_case(b, bucket, Params::of(bp), c.bucket);

  c.gemm = gemm.tensors;
  c.gemm.at("ids") = c.bucket.at("ids");
  c.gemm.at("tpe") = c.bucket.at("tpe");
  run_case(b, gemm_op, Params::of(gp), c.gemm);
  return c;
}

TEST(OpenclMoe, RouterToExpertGemmChainOnTheDevice) {
  Backend* ocl = test::available_backend("opencl");
  if (!ocl) GTEST_SKIP() << "no opencl backend (or driver) here";
  Backend& ref = backend("reference");
  const Op& route = op_or_throw("route_topk_softmax");
  const Op& gemm_op = op_or_throw("gemm_quant_moe_id");
  struct Shape {
    int64_t tokens, experts, top_k;
    QuantKind kind;
  };
  // 8 experts of 9 tokens x top 2 (several tokens on each), 64 of top 6 (most with no token).
  for (const Shape& s : {Shape{9, 8, 2, QuantKind::Q4_K}, Shape{5, 64, 6, QuantKind::Q8_0}}) {
    const RouteTopkSoftmaxParams rp{s.tokens, s.experts, s.top_k, true};
    const int64_t pairs = s.tokens * s.top_k;
    const GemmQuantMoeIdParams gp{{s.kind, s.experts, 24, 256}, 1, s.top_k, pairs, s.tokens};
    const Case logits = generate_case(route, Params::of(rp), DType::F32, 3);
    const Case gemm = generate_case(gemm_op, Params::of(gp), DType::F32, 4);
    const Chain got = run_chain(*ocl, rp, gp, gemm, logits.tensors.at("logits"));
    const Chain want = run_chain(ref, rp, gp, gemm, logits.tensors.at("logits"));
    const std::string what = fmt::format("{} experts top {} {}", s.experts, s.top_k, enum_name(s.kind));

    const Tensor& tpe = want.bucket.at("tpe");
    ASSERT_EQ(std::memcmp(got.bucket.at("tpe").data(), tpe.data(), tpe.nbytes()), 0) << what << ": tpe";
    for (int64_t e = 0; e < s.experts; ++e)
      EXPECT_EQ(std::memcmp(got.bucket.at("ids").as<int32_t>() + e * pairs,
                            want.bucket.at("ids").as<int32_t>() + e * pairs, tpe.as<int32_t>()[e] * sizeof(int32_t)),
                0)
          << what << ": ids of expert " << e;
    const Tolerance tol = gemm_op.tolerance(Params::of(gp), DType::F32, gemm.tensors);
    const ErrorReport r = compare(want.gemm.at("out"), got.gemm.at("out"), tol);
    EXPECT_TRUE(r.pass()) << what << ": " << r.summary() << " (" << tol.str() << ")";
  }
}

// gemm_quant of one activation row (at element a_at) against expert e's rows of the stack, on b.
Tensor dense_gemv(Backend& b, const GemvQuantMoeIdParams& p, const TensorMap& moe, int64_t e, int64_t a_at) {
  const Op& op = op_or_throw("gemm_quant");
  const GemmQuantParams gp{p.w.kind, 1, p.w.n_rows, p.w.n_cols};
  const Tensor& a = moe.at("a");
  const Tensor& w = moe.at("weights");
  TensorMap io = allocate_from_decls(op.tensors(Params::of(gp), a.dtype()));
  const size_t es = dtype_size(a.dtype()), per_expert = w.nbytes() / static_cast<size_t>(p.w.num_experts);
  std::memcpy(io.at("a").data(), a.data() + a_at * static_cast<int64_t>(es), static_cast<size_t>(p.w.n_cols) * es);
  std::memcpy(io.at("weight").data(), w.data() + static_cast<size_t>(e) * per_expert, per_expert);
  run_case(b, op, Params::of(gp), io);
  return io.at("out");
}

TEST(OpenclMoe, ExpertGemvIsTheDenseDecodeGemvBitForBit) {
  Backend* ocl = test::available_backend("opencl");
  if (!ocl) GTEST_SKIP() << "no opencl backend (or driver) here";
  const Op& op = op_or_throw("gemv_quant_moe_id");
  using enum QuantKind;
  uint64_t seed = 21;
  for (QuantKind kind : {Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K}) {
    // 11 pairs on 8 experts (repeats), each on its own row of a; 33 weight rows (an odd last row block).
    const int64_t n = 11, cols = 512, stride = cols + 32;
    const GemvQuantMoeIdParams p{{kind, 8, 33, cols}, n, stride, (n - 1) * stride + cols};
    const Case c = generate_case(op, Params::of(p), DType::F32, seed++);
    TensorMap io = c.tensors;
    run_case(*ocl, op, Params::of(p), io);
    const int32_t* ids = io.at("ids").as<int32_t>();
    for (int64_t i = 0; i < n; ++i) {
      const Tensor want = dense_gemv(*ocl, p, io, ids[i], i * stride);
      const std::byte* got = io.at("out").data() + i * static_cast<int64_t>(want.nbytes());
      EXPECT_EQ(std::memcmp(got, want.data(), want.nbytes()), 0)
          << enum_name(kind) << " pair " << i << " (expert " << ids[i] << ")";
    }
  }
}

}  // namespace
}  // namespace ts
