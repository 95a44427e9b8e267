// transpose_head_to_token: [heads, tokens, dim] -> [tokens, heads, dim],
// after attention, back to token-major rows for the output projection.
#include "core/ops/core_params.h"
#include "core/ops/describe.h"
#include "reference/reference.h"

namespace ts {
using namespace describe;

namespace {
TransposeParams shape(int64_t tokens, int64_t heads, int64_t dim) { return {tokens, heads, dim}; }
}  // namespace

const Op& op_transpose_head_to_token() {
  static const TypedOp<TransposeParams> op({
      .name = "transpose_head_to_token",
      .family = "core",
      .summary = "[heads, tokens, dim] -> [tokens, heads, dim]",
      .tensors = [](const TransposeParams& p) {
        return std::vector{in("src", {p.heads, p.tokens, p.dim}), out("dst", {p.tokens, p.heads, p.dim})};
      },
      .validate_params = [](const TransposeParams& p) {
        positive(p.tokens, "tokens"); positive(p.heads, "heads"); positive(p.dim, "dim");
      },
      .generate = [](const TransposeParams&, TensorMap& t, Rng& r) { normal(t["src"], r); },
      .reference = ref::transpose_head_to_token,
      .tolerance = [](const TransposeParams&, DType) { return tol::exact(); },
      .cost = [](const TransposeParams& p, DType dt) {
        return Cost{0, bytes(dt, 2.0 * double(p.tokens) * double(p.heads) * double(p.dim))};
      },
      .cases = {
          {"t1_h1_d1", Tier::Smoke, shape(1, 1, 1)},
          {"t3_h2_d7", Tier::Smoke, shape(3, 2, 7)},
          {"t17_h3_d33", Tier::Ci, shape(17, 3, 33)},
          {"t257_h1_d17", Tier::Ci, shape(257, 1, 17)},
          {"t1_h7_d1000", Tier::Ci, shape(1, 7, 1000)},
          {"llama3_8b_t5_h32_d128", Tier::Ci, shape(5, 32, 128)},
          {"llama3_8b_kv_t33_h8_d128", Tier::Ci, shape(33, 8, 128)},
          {"llama3_8b_t512_h32_d128", Tier::Full, shape(512, 32, 128)},
      },
      .benches = {
          {"llama3_8b_t2048_h32_d128", Tier::Full, shape(2048, 32, 128)},  // 64 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
