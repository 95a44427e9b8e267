// split_qkv: a fused projection's [tokens, q_dim + 2*kv_dim] rows split into q, k, v (columns, in order).
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
SplitQkvParams split(int64_t tokens, int64_t q_dim, int64_t kv_dim) { return {tokens, q_dim, kv_dim}; }
}  // namespace

const Op& op_split_qkv() {
  static const TypedOp<SplitQkvParams> op({
      .name = "split_qkv",
      .family = "core",
      .summary = "qkv[tokens, q_dim + 2*kv_dim] -> q[tokens, q_dim], k, v[tokens, kv_dim]",
      .tensors = [](const SplitQkvParams& p) {
        return std::vector{in("qkv", {p.tokens, checked::add(p.q_dim, checked::mul(2, p.kv_dim, "2 kv_dim"), "q_dim + 2 kv_dim")}), out("q", {p.tokens, p.q_dim}),
                           out("k", {p.tokens, p.kv_dim}), out("v", {p.tokens, p.kv_dim})};
      },
      .validate_params = [](const SplitQkvParams& p) {
        positive(p.tokens, "tokens"); positive(p.q_dim, "q_dim"); positive(p.kv_dim, "kv_dim");
      },
      .generate = [](const SplitQkvParams&, TensorMap& t, Rng& r) { normal(t["qkv"], r); },
      .tolerance = [](const SplitQkvParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const SplitQkvParams& p, DType dt) {
        return Cost{0, bytes(dt, 2.0 * double(p.tokens) * double(p.q_dim + 2 * p.kv_dim))};
      },
      .cases = {
          {"t1_q1_kv1", Tier::Smoke, split(1, 1, 1)},
          {"t3_q7_kv3", Tier::Smoke, split(3, 7, 3)},
          {"t5_q33_kv17", Tier::Ci, split(5, 33, 17)},
          {"t17_q257_kv1", Tier::Ci, split(17, 257, 1)},
          {"t7_q1000_kv257", Tier::Ci, split(7, 1000, 257)},
          {"llama3_8b_t2", Tier::Ci, split(2, 4096, 1024)},  // 32 q heads, 8 kv heads, head_dim 128
          {"qwen25_7b_t16", Tier::Full, split(16, 3584, 512)},  // 28 q heads, 4 kv heads
          {"llama3_8b_t64", Tier::Full, split(64, 4096, 1024)},
      },
      .benches = {
          {"llama3_8b_t1024", Tier::Full, split(1024, 4096, 1024)},  // 48 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
