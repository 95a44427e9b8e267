// qk_norm_rope: per token and head, optional RMS norm then rotate-half RoPE at pos_offset + t; the
// result is written head-major.
#include "core/ops/core/rope_common.h"
#include "core/ops/core_params.h"

namespace ts {
using namespace describe;

const Op& op_qk_norm_rope() {
  using P = QkNormRopeParams;
  static const TypedOp<P> op({
      .name = "qk_norm_rope",
      .family = "core",
      .summary = "input [tokens,heads,hd] -> output [heads,tokens,hd]: mode 0 transpose, 1 RMS norm + RoPE, 2 RoPE",
      .tensors = [](const P& p) {
        const Shape table = rope::table_shape(p.max_pos, p.rotary_dim, p.head_dim);
        return std::vector{in("input", {p.tokens, p.heads, p.head_dim}), in("norm_w", {p.head_dim}),
                           in("cos", table), in("sin", table), out("output", {p.heads, p.tokens, p.head_dim})};
      },
      .validate_params = [](const P& p) {
        positive(p.tokens, "tokens");
        positive(p.heads, "heads");
        rope::check_params(p.head_dim, p.rotary_dim, p.mode, p.eps, p.max_pos, "mode");
      },
      // Positions index the tables only when RoPE applies (mode 0 never reads them).
      .validate_data = [](const P& p, const TensorMap&) {
        rope::check_positions(p.pos_offset, p.tokens, p.max_pos, p.mode != rope::kTransposeOnly);
      },
      .infer = [](P& p, const TensorMap& t) { p.max_pos = rope::infer_max_pos(t); },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["input"], r);
        rope::generate_norm_weight(t["norm_w"], r);
        rope::generate_tables(t, p.max_pos, p.rotary_dim, p.head_dim);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        return rope::tolerance(dt, p.mode, p.head_dim, in, "input", {"norm_w"});
      },
      .cost = [](const P& p, DType dt) {
        const double n = double(p.tokens * p.heads * p.head_dim), half = rope::rotary(p.rotary_dim, p.head_dim) / 2;
        const double tables = p.mode == rope::kTransposeOnly ? 0 : 2.0 * p.tokens * half;
        return Cost{rope::flops(p.mode, p.tokens * p.heads, p.head_dim, p.rotary_dim),
                    bytes(dt, 2 * n + tables + (p.mode == rope::kNormRope ? p.head_dim : 0))};
      },
      .cases = {
          {"mode1_hd128", Tier::Smoke, {.tokens = 5, .heads = 4, .head_dim = 128, .max_pos = 16}},
          {"mode0_transpose_hd64", Tier::Smoke, {.tokens = 3, .heads = 2, .head_dim = 64, .mode = 0, .max_pos = 4}},
          {"mode2_hd64_pos_offset", Tier::Ci,
           {.tokens = 7, .heads = 3, .head_dim = 64, .pos_offset = 100, .mode = 2, .max_pos = 128}},
          {"mode1_partial_rotary_hd128", Tier::Ci,
           {.tokens = 6, .heads = 2, .head_dim = 128, .pos_offset = 9, .rotary_dim = 64, .max_pos = 32}},
          {"mode2_partial_rotary_hd80", Tier::Ci,
           {.tokens = 4, .heads = 5, .head_dim = 80, .pos_offset = 3, .mode = 2, .rotary_dim = 32, .max_pos = 8}},
          // The last rows of the tables: pos_offset + tokens == max_pos.
          {"mode1_hd256_last_positions", Tier::Ci, {.tokens = 4, .heads = 2, .head_dim = 256, .pos_offset = 60, .max_pos = 64}},
          {"mode1_hd96_eps_1e5", Tier::Ci, {.tokens = 3, .heads = 3, .head_dim = 96, .eps = 1e-5f, .max_pos = 3}},
          // Qwen3-8B keys: 8 kv heads of 128, qk-norm then RoPE.
          {"qwen3_8b_k_prefill128", Tier::Full, {.tokens = 128, .heads = 8, .head_dim = 128, .max_pos = 4096}},
      },
      .benches = {
          {"qwen3_8b_q_prefill512", Tier::Full, {.tokens = 512, .heads = 32, .head_dim = 128, .max_pos = 4096}},
      },
  });
  return op;
}

}  // namespace ts
