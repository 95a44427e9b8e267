// qk_norm_rope and its batched and split forms: rope.comp, one dispatch per destination.
#include "core/ops/core_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
// One rope.comp dispatch: rows x heads rows of hd, read at so + t s_tok + h hd, written at
// dof + h d_head + t d_tok.
struct Rope {
  std::string src, dst, w, positions;  // w, positions: any tensor when unused (never read)
  int64_t rows = 1, heads = 1, hd = 1, rotary_dim = 0, mode = 0;
  float eps = 0;
  int64_t so = 0, s_tok = 0, dof = 0, d_head = 0, d_tok = 0, pos_offset = 0;
};

Dispatch rope(const Target& tg, const Rope& r) {
  const int64_t rot = r.rotary_dim ? r.rotary_dim : r.hd;
  Dispatch d;
  d.shader = tg.variant(Kernel::rope);
  d.bindings = {r.src, r.dst, r.w, "cos", "sin", r.positions.empty() ? r.src : r.positions};
  d.push = Push()
               .u(r.rows).u(r.heads).u(r.hd).u(rot / 2).u(r.mode).f(r.eps)
               .u(r.so).u(r.s_tok).u(r.dof).u(r.d_head).u(r.d_tok).u(r.pos_offset).u(r.positions.empty() ? 0 : 1)
               .words();
  d.groups = {groups_for(r.rows * r.heads, 1, tg.group_cap), 1, 1};
  return d;
}

// q, k, v out of a token-major qkv row [q_heads + 2 kv_heads, hd]; k and v land at row `row0` of
// head-major destinations with `cap` rows per head.
std::vector<Dispatch> split_norm_rope(const Target& tg, const SplitQkvNormRopeParams& p, const std::string& q_dst,
                                      const std::string& k_dst, const std::string& v_dst, int64_t row0, int64_t cap) {
  const int64_t hd = p.head_dim, w = (p.q_heads + 2 * p.kv_heads) * hd;
  Rope base{.src = "qkv", .rows = p.tokens, .hd = hd, .rotary_dim = p.rotary_dim, .mode = p.qk_mode, .eps = p.eps,
            .s_tok = w, .d_tok = hd, .pos_offset = p.pos_offset};
  Rope q = base, k = base, v = base;
  q.dst = q_dst, q.w = "q_norm_w", q.heads = p.q_heads, q.so = 0, q.d_head = p.tokens * hd;
  k.dst = k_dst, k.w = "k_norm_w", k.heads = p.kv_heads, k.so = p.q_heads * hd;
  k.dof = row0 * hd, k.d_head = cap * hd;
  v = k;
  v.dst = v_dst, v.mode = 0, v.so = (p.q_heads + p.kv_heads) * hd;
  return {rope(tg, q), rope(tg, k), rope(tg, v)};
}
}  // namespace

void add_rope_planners(PlannerTable& t) {
  add_planner(t, ops::qk_norm_rope, [](const QkNormRopeParams& p, const TensorMap&, const Target& tg) {
    // input [tokens, heads, hd] -> output [heads, tokens, hd]
    return std::vector{rope(tg, {.src = "input", .dst = "output", .w = "norm_w", .rows = p.tokens, .heads = p.heads,
                                 .hd = p.head_dim, .rotary_dim = p.rotary_dim, .mode = p.mode, .eps = p.eps,
                                 .s_tok = p.heads * p.head_dim, .d_head = p.tokens * p.head_dim, .d_tok = p.head_dim,
                                 .pos_offset = p.pos_offset})};
  });
  add_planner(
      t, ops::qk_norm_rope_batched_per_item,
      [](const QkNormRopeBatchedPerItemParams& p, const TensorMap&, const Target& tg) {
        // input [m, heads, hd] -> output [m, heads, hd], item i at positions[i]
        return std::vector{rope(tg, {.src = "input", .dst = "output", .w = "norm_w", .positions = "positions",
                                     .rows = p.m, .heads = p.heads, .hd = p.head_dim, .rotary_dim = p.rotary_dim,
                                     .mode = p.mode, .eps = p.eps, .s_tok = p.heads * p.head_dim,
                                     .d_head = p.head_dim, .d_tok = p.heads * p.head_dim})};
      });
  add_planner(
      t, ops::split_qkv_norm_rope, [](const SplitQkvNormRopeParams& p, const TensorMap&, const Target& tg) {
        return split_norm_rope(tg, p, "q_out", "k_out", "v_out", 0, p.tokens);
      });
  add_planner(
      t, ops::split_qkv_norm_rope_into_cache,
      [](const SplitQkvNormRopeIntoCacheParams& p, const TensorMap&, const Target& tg) {
        return split_norm_rope(tg, p, "q_out", "cache_k", "cache_v", p.cache_len, p.cache_capacity);
      });
}

}  // namespace ts::vk
