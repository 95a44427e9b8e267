// linear_3d, linear_3d_bias: out[batch, seq, n] = x[batch, seq, k] @ weight[n, k]^T (+ bias[n]). A
// gemm of batch * seq rows: backends run it on their gemm engine, and its presets are gemm's shapes.
#include "core/ops/describe.h"
#include "core/ops/tensor_params.h"

namespace ts {
using namespace describe;

namespace {

Linear3dParams shape(int64_t batch, int64_t seq, int64_t k, int64_t n) { return {batch, seq, k, n}; }

template <class P> OpDef<P> linear_def(bool bias) {
  std::vector<Preset<P>> cases, benches;
  for (const auto& [name, tier, s] : std::vector<std::tuple<std::string, Tier, Linear3dParams>>{
           {"b1_s1_k1_n1", Tier::Smoke, shape(1, 1, 1, 1)},
           {"b2_s3_k33_n17", Tier::Smoke, shape(2, 3, 33, 17)},
           {"decode_b1_s1_k67_n13", Tier::Ci, shape(1, 1, 67, 13)},
           {"b4_s1_k257_n129", Tier::Ci, shape(4, 1, 257, 129)},  // 4 rows: the gemv path's widest
           {"b1_s5_k100_n300", Tier::Ci, shape(1, 5, 100, 300)},  // 5 rows: past it
           {"b3_s7_k65_n31", Tier::Ci, shape(3, 7, 65, 31)},
           {"b2_s32_k64_n64", Tier::Ci, shape(2, 32, 64, 64)},
           {"b1_s1_k64_n4096", Tier::Ci, shape(1, 1, 64, 4096)},
       })
    cases.push_back({name, tier, P{s}});
  if (bias) {
    // Phi-2: hidden 2560, every projection with a bias.
    cases.push_back({"phi2_b1_s4_k2560_n2560", Tier::Full, P{shape(1, 4, 2560, 2560)}});
    benches = {{"phi2_decode_k2560_n2560", Tier::Full, P{shape(1, 1, 2560, 2560)}},
               {"phi2_prefill512_k2560_n2560", Tier::Full, P{shape(1, 512, 2560, 2560)}}};
  } else {
    // Llama-3-8B's q projection, 4096 -> 4096: gemm's m1_n4096_k4096 and m512_n4096_k4096.
    cases.push_back({"llama3_8b_q_b2_s3", Tier::Full, P{shape(2, 3, 4096, 4096)}});
    benches = {{"llama3_8b_q_decode", Tier::Full, P{shape(1, 1, 4096, 4096)}},
               {"llama3_8b_q_prefill512", Tier::Full, P{shape(1, 512, 4096, 4096)}}};
  }
  return {
      .name = bias ? "linear_3d_bias" : "linear_3d",
      .family = "tensor",
      .summary = bias ? "out[b,s,n] = x[b,s,k] @ weight[n,k]^T + bias[n]" : "out[b,s,n] = x[b,s,k] @ weight[n,k]^T",
      .tensors = [bias](const P& p) {
        std::vector v{in("x", {p.batch, p.seq, p.k}), in("weight", {p.n, p.k})};
        if (bias) v.push_back(in("bias", {p.n}));
        v.push_back(out("out", {p.batch, p.seq, p.n}));
        return v;
      },
      .validate_params = [](const P& p) {
        positive(p.batch, "batch");
        positive(p.seq, "seq");
        positive(p.k, "k");
        positive(p.n, "n");
        (void)checked::mul(p.batch, p.seq, "rows batch * seq");
      },
      .generate = [bias](const P&, TensorMap& t, Rng& r) {
        normal(t["x"], r);
        normal(t["weight"], r);
        if (bias) normal(t["bias"], r);
      },
      // gemm's bound (terms |x||w| of the case's data, a dot of k of them); the bias joins the F32 sum
      // as one more term.
      .tolerance = [bias](const P& p, DType dt, const TensorMap& in) {
        // k products and, with a bias, the bias itself: each term bounded by the larger of the two.
        const double products = magnitude::max_abs(in, "x") * magnitude::max_abs(in, "weight");
        return bias ? tol::accumulation(dt, double(p.k) + 1, std::max(products, magnitude::max_abs(in, "bias")),
                                        "max(max|x| x max|weight|, max|bias|)")
                    : tol::accumulation(dt, double(p.k), products, "max|x| x max|weight|");
      },
      .cost = [bias](const P& p, DType dt) {
        const double m = double(p.batch * p.seq);
        return Cost{2.0 * m * p.n * p.k + (bias ? m * p.n : 0),
                    bytes(dt, m * p.k + double(p.n * p.k) + m * p.n + (bias ? p.n : 0))};
      },
      .cases = std::move(cases),
      .benches = std::move(benches),
  };
}

}  // namespace

const Op& op_linear_3d() {
  static const TypedOp<Linear3dParams> op(linear_def<Linear3dParams>(false));
  return op;
}

const Op& op_linear_3d_bias() {
  static const TypedOp<Linear3dBiasParams> op(linear_def<Linear3dBiasParams>(true));
  return op;
}

}  // namespace ts
