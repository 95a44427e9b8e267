// qk_norm_rope and its batched and split forms, also into paged KV pools: rope.comp, one dispatch
// per destination; apply_rope_positions / apply_rope_partial: rope_positions.comp.
#include <algorithm>
#include <bit>

#include "core/ops/core_params.h"
#include "core/ops/paged/pool.h"
#include "core/ops/paged_params.h"
#include "core/ops/tensor/rope_angle.h"
#include "core/ops/tensor_params.h"
#include "vulkan/plan.h"
#include "vulkan/shaders/rope_push.glsl"

namespace ts::vk {

namespace {
// One rope.comp dispatch: rows x heads rows of hd, read at so + t s_tok + h hd, written at
// dof + h d_head + t d_tok, or (dest != AFFINE) into a pool slot through a block table.
// Destinations are core/kinds.h's PoolDest, rope.comp's DEST_* (kinds.glsl).
using Dest = PoolDest;
struct Rope {
  std::string src, dst, w, positions;  // w, positions: any tensor when unused (never read)
  int64_t rows = 1, heads = 1, hd = 1, rotary_dim = 0, mode = 0;
  float eps = 0;
  int64_t so = 0, s_tok = 0, dof = 0, d_head = 0, d_tok = 0, pos_offset = 0;
  // A ragged batch: positions are pos_offsets, sequences cut by cu (cu_seqlens_q).
  std::string cu;
  int64_t num_seqs = 0;
  // Paged destinations: the tables, pool positions from cache_len (one sequence) or the row's own.
  Dest dest = Dest::AFFINE;
  std::string tables;
  int64_t cache_len = 0, block_size = 1, width = 0, x = 1;
};

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

// q, k, v out of a token-major qkv row [q_heads + 2 kv_heads, hd], the first at element `src0`; q
// head-major from element q0 of q_dst (or token-major: q_token_major); k and v at row `row0` of
// head-major destinations with `cap` rows per head, or into pools as `paged` says (its dest for keys).
struct SplitTo {
  std::string q, k, v;
  int64_t src0 = 0, q0 = 0, row0 = 0, cap = 0;
  bool q_token_major = false;
  Rope paged;  // dest, tables, cache_len, block_size, width, x; cu, num_seqs, positions for ragged rows
};

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

// The split into a pool: ferrum's layout, or vLLM's (keys interleaved by x, values channel-major).
Rope pool_dest(paged::Layout layout, int64_t block_size, int64_t width, int64_t x, const char* tables,
               const Target& tg) {
  Rope r;
  const bool vllm = layout == paged::Layout::Vllm;
  r.dest = vllm ? Dest::VLLM_KEY : Dest::FERRUM;
  r.tables = tables, r.block_size = block_size, r.width = width;
  r.x = vllm ? (x ? x : paged::vllm_x(tg.dtype)) : 1;
  check(r.x > 0 && (r.x & (r.x - 1)) == 0, "vulkan: vLLM's x = {} is not a power of two", r.x);
  return r;
}

std::vector<Dispatch> split_single(const PagedSplitParams& p, paged::Layout layout, const Target& tg) {
  const int64_t es = static_cast<int64_t>(dtype_size(tg.dtype));
  SplitTo to{.q = "q_out", .k = "cache_k", .v = "cache_v", .src0 = p.qkv_byte_offset / es,
             .q0 = p.q_out_byte_offset / es};
  to.paged = pool_dest(layout, p.block_size, p.max_num_blocks_per_seq, p.x, "block_table", tg);
  to.paged.cache_len = p.cache_len;
  return split_norm_rope(tg, p, to);
}

std::vector<Dispatch> split_varlen(const PagedSplitVarlenParams& p, paged::Layout layout, const Target& tg) {
  const SplitQkvNormRopeParams sp{.tokens = p.m_total, .q_heads = p.q_heads, .kv_heads = p.kv_heads,
                                  .head_dim = p.head_dim, .eps = p.eps, .qk_mode = p.qk_mode,
                                  .rotary_dim = p.rotary_dim, .max_pos = p.max_pos};
  SplitTo to{.q = "q_out", .k = "cache_k", .v = "cache_v", .q_token_major = true};
  to.paged = pool_dest(layout, p.block_size, p.max_blocks_per_seq, p.x, "block_tables", tg);
  to.paged.cu = "cu_seqlens_q", to.paged.positions = "pos_offsets", to.paged.num_seqs = p.num_seqs;
  return split_norm_rope(tg, sp, to);
}
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
  using paged::Layout;
  add_planner(t, ops::split_qkv_norm_rope_into_paged_cache,
              [](const PagedSplitParams& p, const Decls&, const Target& tg) {
                return split_single(p, Layout::Ferrum, tg);
              });
  add_planner(t, ops::split_qkv_norm_rope_into_paged_cache_vllm,
              [](const PagedSplitParams& p, const Decls&, const Target& tg) {
                return split_single(p, Layout::Vllm, tg);
              });
  add_planner(t, ops::split_qkv_norm_rope_into_paged_cache_varlen,
              [](const PagedSplitVarlenParams& p, const Decls&, const Target& tg) {
                return split_varlen(p, Layout::Ferrum, tg);
              });
  add_planner(t, ops::split_qkv_norm_rope_into_paged_cache_varlen_vllm,
              [](const PagedSplitVarlenParams& p, const Decls&, const Target& tg) {
                return split_varlen(p, Layout::Vllm, tg);
              });
}

}  // namespace ts::vk
