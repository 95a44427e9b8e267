// split_qkv_norm_rope: split fused qkv rows, (norm +) RoPE q and k per head, all three head-major.
#include "core/ops/core/rope_common.h"
#include "core/ops/core_params.h"

namespace ts {
using namespace describe;

const Op& op_split_qkv_norm_rope() {
  using P = SplitQkvNormRopeParams;
  static const TypedOp<P> op({
      .name = "split_qkv_norm_rope",
      .family = "core",
      .summary = "qkv [tokens,(qh+2kvh)*hd] -> q_out [qh,t,hd], k_out, v_out [kvh,t,hd]; qk_norm_rope on q and k",
      .tensors = [](const P& p) {
        auto d = rope::split_inputs(p);
        d.push_back(out("q_out", {p.q_heads, p.tokens, p.head_dim}));
        d.push_back(out("k_out", {p.kv_heads, p.tokens, p.head_dim}));
        d.push_back(out("v_out", {p.kv_heads, p.tokens, p.head_dim}));
        return d;
      },
      .validate_params = rope::check_split_params,
      // Positions index the tables only when RoPE applies (qk_mode 0 never reads them).
      .validate_data = [](const P& p, const TensorMap&) {
        rope::check_positions(p.pos_offset, p.tokens, p.max_pos, p.qk_mode != rope::kTransposeOnly);
      },
      .infer = [](P& p, const TensorMap& t) { p.max_pos = rope::infer_max_pos(t); },
      .generate = rope::generate_split_inputs,
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        return rope::tolerance(dt, p.qk_mode, p.head_dim, in, "qkv", {"q_norm_w", "k_norm_w"});
      },
      .cost = rope::split_cost,
      .cases = {
          {"qh4_kvh2_mode1_hd128", Tier::Smoke, {.tokens = 5, .q_heads = 4, .kv_heads = 2, .head_dim = 128, .max_pos = 8}},
          {"qh2_kvh2_mode0_hd64", Tier::Smoke, {.tokens = 3, .q_heads = 2, .kv_heads = 2, .head_dim = 64, .qk_mode = 0}},
          {"qh8_kvh1_mode2_pos_offset_hd64", Tier::Ci,
           {.tokens = 6, .q_heads = 8, .kv_heads = 1, .head_dim = 64, .pos_offset = 37, .qk_mode = 2, .max_pos = 43}},
          {"qh6_kvh2_mode1_partial_rotary_hd128", Tier::Ci,
           {.tokens = 4, .q_heads = 6, .kv_heads = 2, .head_dim = 128, .pos_offset = 2, .rotary_dim = 32, .max_pos = 16}},
          {"qh5_kvh1_mode2_hd80", Tier::Ci, {.tokens = 3, .q_heads = 5, .kv_heads = 1, .head_dim = 80, .qk_mode = 2, .max_pos = 3}},
          {"qh4_kvh4_mode1_hd256", Tier::Ci, {.tokens = 2, .q_heads = 4, .kv_heads = 4, .head_dim = 256, .pos_offset = 7, .max_pos = 9}},
          // Qwen3-8B: 32 query heads, 8 kv heads of 128, qk-norm then RoPE; a 64-token prefill chunk.
          {"qwen3_8b_chunk64", Tier::Full,
           {.tokens = 64, .q_heads = 32, .kv_heads = 8, .head_dim = 128, .pos_offset = 448, .max_pos = 4096}},
      },
      .benches = {
          {"qwen3_8b_prefill512", Tier::Full,
           {.tokens = 512, .q_heads = 32, .kv_heads = 8, .head_dim = 128, .max_pos = 4096}},
      },
  });
  return op;
}

}  // namespace ts
