// qk_norm_rope and its batched and split forms: rope.comp, one dispatch per destination (also the
// paged split ops' writer, vulkan/dense/split_rope.h); apply_rope_positions / apply_rope_partial:
// rope_positions.comp.
#include <algorithm>
#include <bit>

#include "core/ops/core_params.h"
#include "core/ops/tensor/rope_angle.h"
#include "core/ops/tensor_params.h"
#include "vulkan/dense/split_rope.h"
#include "vulkan/plan.h"
#include "vulkan/shaders/rope_push.glsl"

namespace ts::vk {

Dispatch rope(const Target& tg, const Rope& r) {
  const int64_t rot = r.rotary_dim ? r.rotary_dim : r.hd;
  const int64_t use_positions = !r.cu.empty() ? 2 : r.positions.empty() ? 0 : 1;
  auto or_src = [&](const std::string& t) { return t.empty() ? r.src : t; };
  Dispatch d;
  d.shader = tg.variant(Kernel::rope);
  d.bindings = {r.src, r.dst, r.w, "cos", "sin", or_src(r.positions), or_src(r.tables), or_src(r.cu)};
  RopePushIn pc;
  pc.rows = r.rows, pc.heads = r.heads, pc.hd = r.hd, pc.half_rot = rot / 2, pc.mode = r.mode, pc.eps = r.eps;
  pc.so = r.so, pc.s_tok = r.s_tok, pc.dof = r.dof, pc.d_head = r.d_head, pc.d_tok = r.d_tok;
  pc.pos_offset = r.pos_offset, pc.use_positions = use_positions, pc.num_seqs = r.num_seqs;
  pc.cache_len = r.cache_len, pc.block_size = r.block_size, pc.width = r.width;
  pc.dest = static_cast<uint32_t>(r.dest), pc.x_shift = std::countr_zero(static_cast<uint64_t>(r.x));
  d.push = push_words(pc);
  d.groups = {groups_for(r.rows * r.heads, 1, tg.group_cap), 1, 1};
  return d;
}

std::vector<Dispatch> split_norm_rope(const Target& tg, const SplitQkvNormRopeParams& p, const SplitTo& to) {
  const int64_t hd = p.head_dim, w = (p.q_heads + 2 * p.kv_heads) * hd;
  Rope base = to.paged;
  base.dest = Dest::AFFINE;
  base.src = "qkv", base.rows = p.tokens, base.hd = hd, base.rotary_dim = p.rotary_dim, base.mode = p.qk_mode;
  base.eps = p.eps, base.s_tok = w, base.d_tok = hd, base.pos_offset = p.pos_offset;
  Rope q = base, k = base, v = base;
  q.dst = to.q, q.w = "q_norm_w", q.heads = p.q_heads, q.so = to.src0, q.dof = to.q0;
  if (to.q_token_major) q.d_head = hd, q.d_tok = p.q_heads * hd;
  else q.d_head = p.tokens * hd;
  k.dst = to.k, k.w = "k_norm_w", k.heads = p.kv_heads, k.so = to.src0 + p.q_heads * hd, k.dest = to.paged.dest;
  k.dof = to.row0 * hd, k.d_head = to.cap * hd;
  v = k;
  v.dst = to.v, v.mode = 0, v.so = to.src0 + (p.q_heads + p.kv_heads) * hd;
  if (v.dest == Dest::VLLM_KEY) v.dest = Dest::VLLM_VALUE;
  return {rope(tg, q), rope(tg, k), rope(tg, v)};
}

namespace {
// apply_rope_positions / apply_rope_partial: rope_positions.comp, the angle table of
// core/ops/tensor/rope_angle.h (built here from the parameters, never the positions) carried in push
// constants kPairs pairs per dispatch, so it needs no buffer; the first dispatch also copies the
// channels past rotary_dim. The dispatches touch disjoint channels.
constexpr int64_t kPairs = 12;  // rope_positions.comp: MAX_PAIRS
constexpr int64_t kRopeWg = 64;  // rope_positions.comp: WG
std::vector<Dispatch> rope_positions(const Target& tg, const RopePositionsParams& p, int64_t rot) {
  const std::vector<uint32_t> words = rope_angle::turn_words(p.base, rot);
  const int64_t half = rot / 2;
  std::vector<Dispatch> out;
  for (int64_t pair0 = 0; pair0 < half; pair0 += kPairs) {
    const int64_t npairs = std::min(kPairs, half - pair0), ncopy = pair0 == 0 ? p.head_dim - rot : 0;
    Push push;
    push.u(p.seq).u(p.heads).u(p.head_dim).u(half).u(pair0).u(npairs).u(ncopy);
    for (int64_t j = 0; j < 2 * kPairs; ++j) push.u(j < 2 * npairs ? words[2 * pair0 + j] : 0);
    Dispatch d;
    d.shader = tg.variant(Kernel::rope_positions);
    d.bindings = {"x", "positions", "out"};
    d.push = push.words();
    d.groups = {groups_for(p.seq * p.heads * (npairs + ncopy), kRopeWg, tg.group_cap), 1, 1};
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

void add_rope_planners(PlannerTable& t) {
  add_planner(t, ops::apply_rope_positions, [](const RopePositionsParams& p, const Decls&, const Target& tg) {
    return rope_positions(tg, p, p.head_dim);
  });
  add_planner(t, ops::apply_rope_partial, [](const RopePartialParams& p, const Decls&, const Target& tg) {
    return rope_positions(tg, p, p.rotary_dim);
  });
  add_planner(t, ops::qk_norm_rope, [](const QkNormRopeParams& p, const Decls&, const Target& tg) {
    // input [tokens, heads, hd] -> output [heads, tokens, hd]
    return std::vector{rope(tg, {.src = "input", .dst = "output", .w = "norm_w", .rows = p.tokens, .heads = p.heads,
                                 .hd = p.head_dim, .rotary_dim = p.rotary_dim, .mode = p.mode, .eps = p.eps,
                                 .s_tok = p.heads * p.head_dim, .d_head = p.tokens * p.head_dim, .d_tok = p.head_dim,
                                 .pos_offset = p.pos_offset})};
  });
  add_planner(
      t, ops::qk_norm_rope_batched_per_item,
      [](const QkNormRopeBatchedPerItemParams& p, const Decls&, const Target& tg) {
        // input [m, heads, hd] -> output [m, heads, hd], item i at positions[i]
        return std::vector{rope(tg, {.src = "input", .dst = "output", .w = "norm_w", .positions = "positions",
                                     .rows = p.m, .heads = p.heads, .hd = p.head_dim, .rotary_dim = p.rotary_dim,
                                     .mode = p.mode, .eps = p.eps, .s_tok = p.heads * p.head_dim,
                                     .d_head = p.head_dim, .d_tok = p.heads * p.head_dim})};
      });
  add_planner(
      t, ops::split_qkv_norm_rope, [](const SplitQkvNormRopeParams& p, const Decls&, const Target& tg) {
        return split_norm_rope(tg, p, {.q = "q_out", .k = "k_out", .v = "v_out", .cap = p.tokens});
      });
  add_planner(
      t, ops::split_qkv_norm_rope_into_cache,
      [](const SplitQkvNormRopeIntoCacheParams& p, const Decls&, const Target& tg) {
        return split_norm_rope(tg, p, {.q = "q_out", .k = "cache_k", .v = "cache_v", .row0 = p.cache_len,
                                       .cap = p.cache_capacity});
      });
}

}  // namespace ts::vk
