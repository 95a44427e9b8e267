// The paged family's split + norm + RoPE ops on Vulkan: the rope family's own writer
// (vulkan/dense/split_rope.h) with its k and v destinations in a pool through the block table.
#include <cstdint>
#include <vector>

#include "core/ops/paged/pool.h"
#include "core/ops/paged_params.h"
#include "vulkan/dense/split_rope.h"

namespace ts::vk {

namespace {
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
}  // namespace

void add_paged_split_planners(PlannerTable& t) {
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
