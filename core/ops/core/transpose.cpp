// transpose_head_to_token: [heads, tokens, dim] -> [tokens, heads, dim], after attention, back to
// token-major rows for the output projection; transpose_token_to_head: the mirror image, taking
// token-major projections into the head-major layout attention reads. One description serves both.
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {

TransposeParams shape(int64_t tokens, int64_t heads, int64_t dim) { return {tokens, heads, dim}; }

OpDef<TransposeParams> transpose_def(bool head_to_token) {
  using P = TransposeParams;
  auto head_major = [](const P& p) { return Shape{p.heads, p.tokens, p.dim}; };
  auto token_major = [](const P& p) { return Shape{p.tokens, p.heads, p.dim}; };
  return {
      .name = head_to_token ? "transpose_head_to_token" : "transpose_token_to_head",
      .family = "core",
      .summary = head_to_token ? "[heads, tokens, dim] -> [tokens, heads, dim]"
                               : "[tokens, heads, dim] -> [heads, tokens, dim]",
      .tensors = [=](const P& p) {
        return std::vector{in("src", head_to_token ? head_major(p) : token_major(p)),
                           out("dst", head_to_token ? token_major(p) : head_major(p))};
      },
      .validate_params = [](const P& p) { positive(p.tokens, "tokens"); positive(p.heads, "heads"); positive(p.dim, "dim"); },
      .generate = [](const P&, TensorMap& t, Rng& r) { normal(t["src"], r); },
      .tolerance = [](const P&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const P& p, DType dt) { return Cost{0, bytes(dt, 2.0 * double(p.tokens) * double(p.heads) * double(p.dim))}; },
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
  };
}

}  // namespace

const Op& op_transpose_head_to_token() {
  static const TypedOp<TransposeParams> op(transpose_def(true));
  return op;
}

const Op& op_transpose_token_to_head() {
  static const TypedOp<TransposeParams> op(transpose_def(false));
  return op;
}

}  // namespace ts
