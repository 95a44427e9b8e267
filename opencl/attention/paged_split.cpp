// The paged family's split + norm + RoPE ops on OpenCL: the rope family's own kernel (kernels/rope.cl,
// opencl/dense/split_rope.h) with its destination found through the block table. Each writes only the
// slots of its own positions.
#include <cstdint>
#include <limits>
#include <vector>

#include "core/ops/paged_params.h"
#include "core/unsupported.h"
#include "opencl/dense/split_rope.h"

namespace ts::ocl {
namespace {

// A pool position or sequence index as the kernels' 32-bit value.
int32_t i32(int64_t v, const char* what) {
  supported_only_if(v >= 0 && v <= std::numeric_limits<int32_t>::max(), "OpenCL paged write: {} {} does not fit in 32 bits", what,
        v);
  return int32_t(v);
}

// The k and v destinations of a split: token t at pool position pos[t] of sequence seq[t].
struct PoolDsts {
  PagedDst k, v;
  View kv(const char* name, const PagedDst& d, int64_t kv_heads, int64_t block_size, int64_t head_dim) const {
    return {name, 0, kv_heads * block_size * head_dim, block_size * head_dim, &d};
  }
};
PoolDsts pool_dsts(bool vllm, cl_mem pos, cl_mem seq, const char* tables, int64_t width, int64_t block_size,
                   int64_t x) {
  const PagedDst k{vllm ? PoolDest::VLLM_KEY : PoolDest::FERRUM, pos, seq, tables, width, block_size, vllm ? x : 0};
  PagedDst v = k;
  v.dest = vllm ? PoolDest::VLLM_VALUE : PoolDest::FERRUM;
  return {k, v};
}

// One sequence: qkv and q_out from their byte offsets, q head-major, token t at RoPE position
// pos_offset + t and pool position cache_len + t (parameters: the table is built here).
void split_single(Planner& pl, bool vllm) {
  const auto& p = pl.params<PagedSplitParams>();
  const int64_t es = int64_t(dtype_size(pl.dtype())), hd = p.head_dim;
  std::vector<int32_t> pos(size_t(p.tokens)), seq(size_t(p.tokens), 0);
  for (int64_t t = 0; t < p.tokens; ++t) pos[t] = i32(p.cache_len + t, "pool position");
  const PoolDsts d = pool_dsts(vllm, pl.ints(pos), pl.ints(seq), "block_table", p.max_num_blocks_per_seq,
                               p.block_size, p.x);
  split_norm_rope(pl, p, p.qkv_byte_offset / es, {"q_out", p.q_out_byte_offset / es, hd, p.tokens * hd},
                  d.kv("cache_k", d.k, p.kv_heads, p.block_size, hd),
                  d.kv("cache_v", d.v, p.kv_heads, p.block_size, hd));
}

// A ragged batch: row r of sequence s at position pos_offsets[s] + r - cu[s], for RoPE and pool alike;
// q_out token-major [m_total, q_heads, hd]. Each row's sequence and position are found on the device
// (kernels/rope.cl's varlen_slots, into two scratch tables) from cu_seqlens_q and pos_offsets, which the
// plan never reads: the writes that follow take them as their tables.
void split_varlen(Planner& pl, bool vllm) {
  const auto& p = pl.params<PagedSplitVarlenParams>();
  if (p.m_total == 0) return;  // no row to write
  const cl_mem pos = pl.scratch(size_t(p.m_total) * sizeof(uint32_t));
  const cl_mem seq = pl.scratch(size_t(p.m_total) * sizeof(uint32_t));
  const size_t g = pl.limits().cpu ? 1 : pl.reduction_group(p.m_total, 64);
  pl.dispatch(pl.kernel("rope.cl", "varlen_slots"), {size_t(p.m_total)}, {g}, pl.buf("cu_seqlens_q"),
              pl.buf("pos_offsets"), p.num_seqs, p.m_total, pos, seq);
  const PoolDsts d = pool_dsts(vllm, pos, seq, "block_tables", p.max_blocks_per_seq, p.block_size, p.x);
  const SplitQkvNormRopeParams sp{.tokens = p.m_total, .q_heads = p.q_heads, .kv_heads = p.kv_heads,
                                  .head_dim = p.head_dim, .eps = p.eps, .qk_mode = p.qk_mode,
                                  .rotary_dim = p.rotary_dim, .max_pos = p.max_pos};
  const int64_t hd = p.head_dim;
  split_norm_rope(pl, sp, 0, {"q_out", 0, p.q_heads * hd, hd}, d.kv("cache_k", d.k, p.kv_heads, p.block_size, hd),
                  d.kv("cache_v", d.v, p.kv_heads, p.block_size, hd), d.k.pos);
}

}  // namespace

void add_paged_split_ops(PlanTable& t) {
  add_plan(t, ops::split_qkv_norm_rope_into_paged_cache, [](Planner& pl) { split_single(pl, false); });
  add_plan(t, ops::split_qkv_norm_rope_into_paged_cache_vllm, [](Planner& pl) { split_single(pl, true); });
  add_plan(t, ops::split_qkv_norm_rope_into_paged_cache_varlen, [](Planner& pl) { split_varlen(pl, false); });
  add_plan(t, ops::split_qkv_norm_rope_into_paged_cache_varlen_vllm, [](Planner& pl) { split_varlen(pl, true); });
}

}  // namespace ts::ocl
