// qk_norm_rope_batched_per_item: m one-token items, each through qk_norm_rope at its own position.
#include "core/ops/core/rope_common.h"
#include "core/ops/core_params.h"

namespace ts {
using namespace describe;

const Op& op_qk_norm_rope_batched_per_item() {
  using P = QkNormRopeBatchedPerItemParams;
  static const TypedOp<P> op({
      .name = "qk_norm_rope_batched_per_item",
      .family = "core",
      .summary = "input [m,heads,hd], positions U32 [m] -> output [m,heads,hd]: qk_norm_rope per one-token item",
      .tensors = [](const P& p) {
        const Shape table = rope::table_shape(p.max_pos, p.rotary_dim, p.head_dim);
        return std::vector{in("input", {p.m, p.heads, p.head_dim}), in("norm_w", {p.head_dim}), in("cos", table),
                           in("sin", table), pinned(in("positions", {p.m}), DType::U32),
                           out("output", {p.m, p.heads, p.head_dim})};
      },
      .validate_params = [](const P& p) {
        positive(p.m, "m");
        positive(p.heads, "heads");
        rope::check_params(p.head_dim, p.rotary_dim, p.mode, p.eps, p.max_pos, "mode");
      },
      // Positions index the tables only when RoPE applies (mode 0 never reads them).
      .validate_data = [](const P& p, const TensorMap& t) {
        if (p.mode != rope::kTransposeOnly) rope::check_position_tensor(t.at("positions"), p.max_pos);
      },
      .infer = [](P& p, const TensorMap& t) { p.max_pos = rope::infer_max_pos(t); },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["input"], r);
        rope::generate_norm_weight(t["norm_w"], r);
        rope::generate_tables(t, p.max_pos, p.rotary_dim, p.head_dim);
        // Unordered positions (independent sequences), the last table row among them.
        auto* pos = t["positions"].as<uint32_t>();
        for (int64_t i = 0; i < p.m; ++i) pos[i] = static_cast<uint32_t>(r.below(p.max_pos));
        pos[p.m / 2] = static_cast<uint32_t>(p.max_pos - 1);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        return rope::tolerance(dt, p.mode, p.head_dim, in, "input", {"norm_w"});
      },
      .cost = [](const P& p, DType dt) {
        const double n = double(p.m * p.heads * p.head_dim), half = rope::rotary(p.rotary_dim, p.head_dim) / 2;
        const double tables = p.mode == rope::kTransposeOnly ? 0 : 2.0 * p.m * half;
        return Cost{rope::flops(p.mode, p.m * p.heads, p.head_dim, p.rotary_dim),
                    bytes(dt, 2 * n + tables + (p.mode == rope::kNormRope ? p.head_dim : 0)) + 4.0 * p.m};
      },
      .cases = {
          {"m1_mode1_hd128", Tier::Smoke, {.m = 1, .heads = 4, .head_dim = 128, .max_pos = 64}},
          {"m5_mode2_hd64", Tier::Smoke, {.m = 5, .heads = 3, .head_dim = 64, .mode = 2, .max_pos = 300}},
          {"m7_mode1_partial_rotary_hd128", Tier::Ci, {.m = 7, .heads = 2, .head_dim = 128, .rotary_dim = 64, .max_pos = 200}},
          {"m4_mode2_partial_rotary_hd80", Tier::Ci, {.m = 4, .heads = 5, .head_dim = 80, .mode = 2, .rotary_dim = 32, .max_pos = 50}},
          {"m3_mode0_hd96", Tier::Ci, {.m = 3, .heads = 2, .head_dim = 96, .mode = 0, .max_pos = 8}},
          {"m6_mode1_hd256", Tier::Ci, {.m = 6, .heads = 2, .head_dim = 256, .max_pos = 1000}},
          // Qwen3-8B decode: 32 query heads of 128 for a batch of 16 sequences.
          {"qwen3_8b_q_m16", Tier::Full, {.m = 16, .heads = 32, .head_dim = 128, .max_pos = 4096}},
      },
      .benches = {
          {"qwen3_8b_q_m64", Tier::Full, {.m = 64, .heads = 32, .head_dim = 128, .max_pos = 4096}},
      },
  });
  return op;
}

}  // namespace ts
