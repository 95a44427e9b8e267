// gemm: out[m, n] = sum_k a[m, k] * b[n, k]  (b is a linear layer's [out, in] weight).
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

const Op& op_gemm() {
  static const TypedOp<GemmParams> op({
      .name = "gemm",
      .family = "core",
      .summary = "out[m,n] = a[m,k] @ b[n,k]^T",
      .tensors = [](const GemmParams& p) {
        return std::vector{in("a", {p.m, p.k}), in("b", {p.n, p.k}), out("out", {p.m, p.n})};
      },
      .validate_params = [](const GemmParams& p) { positive(p.m, "m"); positive(p.n, "n"); positive(p.k, "k"); },
      .generate = [](const GemmParams&, TensorMap& t, Rng& r) { normal(t["a"], r); normal(t["b"], r); },
      // A dot of k terms |a||b|, each at most the case's max|a| x max|b|.
      .tolerance = [](const GemmParams& p, DType dt, const TensorMap& in) {
        return tol::accumulation(dt, double(p.k), magnitude::max_abs(in, "a") * magnitude::max_abs(in, "b"), "max|a| x max|b|");
      },
      .cost = [](const GemmParams& p, DType dt) {
        return Cost{2.0 * p.m * p.n * p.k, bytes(dt, double(p.m * p.k + p.n * p.k + p.m * p.n))};
      },
      .cases = {
          {"m1_n1_k1", Tier::Smoke, {1, 1, 1}},
          {"m1_n17_k33", Tier::Smoke, {1, 17, 33}},
          {"m7_n13_k67", Tier::Ci, {7, 13, 67}},
          {"m3_n129_k257", Tier::Ci, {3, 129, 257}},
          {"m33_n65_k31", Tier::Ci, {33, 65, 31}},
          {"m64_n64_k64", Tier::Ci, {64, 64, 64}},
          {"m1_n4096_k64", Tier::Ci, {1, 4096, 64}},
          {"m17_n300_k1000", Tier::Full, {17, 300, 1000}},
          {"llama8b_qkv_m4", Tier::Full, {4, 6144, 4096}},
      },
      .benches = {
          {"m1_n4096_k4096", Tier::Full, {1, 4096, 4096}},
          {"m512_n4096_k4096", Tier::Full, {512, 4096, 4096}},
      },
  });
  return op;
}

}  // namespace ts
