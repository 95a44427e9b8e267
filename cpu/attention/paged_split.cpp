// The paged family's split ops on cpu: the cpu's one split + norm + RoPE (cpu/dense/split_rope.h) with
// destinations in a pool. A ferrum pool's k or v head row is contiguous in its block; vLLM's key
// cache takes a row as groups of x elements, its value cache one element per channel.
#include <cstring>
#include <vector>

#include "core/ops/paged/pool.h"
#include "core/ops/paged_params.h"
#include "cpu/dense/split_rope.h"
#include "cpu/kernels.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/scratch.h"

namespace ts::cpu {
namespace {

using paged::Layout;

// Where the k and v head rows of a position land: through its sequence's block table into the pools.
struct PoolDest {
  Tensor& k;
  Tensor& v;
  paged::Pool pool;

  std::byte* ferrum_row(bool is_k, int64_t b, int64_t kh, int64_t slot) const {
    const size_t es = dtype_size(k.dtype());
    return (is_k ? k : v).data() + pool.key_index(b, kh, slot, 0) * es;
  }
  void vllm_scatter(bool is_k, int64_t b, int64_t kh, int64_t slot, const std::byte* row) const {
    const size_t es = dtype_size(k.dtype());
    const int64_t x = pool.x;
    if (is_k) {
      for (int64_t d = 0; d < pool.head_dim; d += x)
        std::memcpy(k.data() + pool.key_index(b, kh, slot, d) * es, row + d * es, x * es);
    } else {
      for (int64_t d = 0; d < pool.head_dim; ++d) std::memcpy(v.data() + pool.value_index(b, kh, slot, d) * es, row + d * es, es);
    }
  }
  // The destination of the k / v rows of token tok at pool position position(tok) of the sequence
  // whose table table(tok) is.
  template <class Pos, class Table> void bind(SplitDest& d, Pos position, Table table) const {
    const int64_t bs = pool.block_size;
    if (pool.layout == Layout::Ferrum)
      d.kv = [this, position, table, bs](bool is_k, int64_t kh, int64_t tok) {
        const int64_t p = position(tok);
        return ferrum_row(is_k, table(tok)[p / bs], kh, p % bs);
      };
    else
      d.scatter = [this, position, table, bs](bool is_k, int64_t kh, int64_t tok, const std::byte* row) {
        const int64_t p = position(tok);
        vllm_scatter(is_k, table(tok)[p / bs], kh, p % bs, row);
      };
  }
};

PoolDest pool_dest(TensorMap& t, Layout layout, int64_t num_blocks, int64_t kv_heads, int64_t block_size,
                   int64_t head_dim, int64_t x) {
  return {tensor(t, "cache_k"), tensor(t, "cache_v"),
          {layout, num_blocks, kv_heads, block_size, head_dim, layout == Layout::Vllm ? x : 1}};
}

// One sequence: qkv and q_out from their byte offsets, q head-major, token tok at RoPE position
// pos_offset + tok and pool position cache_len + tok.
void split_single(const PagedSplitParams& p, TensorMap& t, Layout layout) {
  Tensor& q_out = tensor(t, "q_out");
  const size_t rb = p.head_dim * dtype_size(q_out.dtype());
  const PoolDest pd = pool_dest(t, layout, p.num_blocks, p.kv_heads, p.block_size, p.head_dim, p.x);
  const uint32_t* table = tensor(t, "block_table").as<uint32_t>();
  std::byte* q0 = q_out.data() + p.q_out_byte_offset;
  SplitDest d{[q0, rb, tokens = p.tokens](int64_t h, int64_t tok) { return q0 + (h * tokens + tok) * rb; }, {}, {},
              [pos0 = p.pos_offset](int64_t tok) { return pos0 + tok; }};
  pd.bind(d, [c = p.cache_len](int64_t tok) { return c + tok; }, [table](int64_t) { return table; });
  split_qkv_norm_rope(p, t, tensor(t, "qkv").data() + p.qkv_byte_offset, p.tokens, d);
}

// A ragged batch: row r of sequence s (cu[s] <= r < cu[s+1]) at position pos_offsets[s] + r - cu[s],
// for RoPE and pool alike; q token-major [m_total, q_heads, hd].
void split_varlen(const PagedSplitVarlenParams& p, TensorMap& t, Layout layout) {
  Tensor& q_out = tensor(t, "q_out");
  const size_t rb = p.head_dim * dtype_size(q_out.dtype());
  const PoolDest pd = pool_dest(t, layout, p.num_blocks, p.kv_heads, p.block_size, p.head_dim, p.x);
  const auto cu = values(tensor(t, "cu_seqlens_q"));
  const auto pos = values(tensor(t, "pos_offsets"));
  const uint32_t* tables = tensor(t, "block_tables").as<uint32_t>();
  ScratchVector<int64_t> seq(static_cast<size_t>(p.m_total)), position(static_cast<size_t>(p.m_total));
  for (int64_t s = 0; s < p.num_seqs; ++s)
    for (int64_t r = cu[s]; r < cu[s + 1]; ++r) seq[r] = s, position[r] = pos[s] + r - cu[s];
  const SplitQkvNormRopeParams sp{.tokens = p.m_total, .q_heads = p.q_heads, .kv_heads = p.kv_heads,
                                  .head_dim = p.head_dim, .eps = p.eps, .qk_mode = p.qk_mode,
                                  .rotary_dim = p.rotary_dim, .max_pos = p.max_pos};
  std::byte* q0 = q_out.data();
  auto at = [&position](int64_t tok) { return position[tok]; };
  SplitDest d{[q0, rb, qh = p.q_heads](int64_t h, int64_t tok) { return q0 + (tok * qh + h) * rb; }, {}, {}, at};
  pd.bind(d, at, [&seq, tables, w = p.max_blocks_per_seq](int64_t tok) { return tables + seq[tok] * w; });
  split_qkv_norm_rope(sp, t, tensor(t, "qkv").data(), p.m_total, d);
}

}  // namespace

void add_paged_split(KernelTable& k) {
  k.add(ops::split_qkv_norm_rope_into_paged_cache,
        [](const PagedSplitParams& p, TensorMap& t) { split_single(p, t, Layout::Ferrum); });
  k.add(ops::split_qkv_norm_rope_into_paged_cache_vllm,
        [](const PagedSplitParams& p, TensorMap& t) { split_single(p, t, Layout::Vllm); });
  k.add(ops::split_qkv_norm_rope_into_paged_cache_varlen,
        [](const PagedSplitVarlenParams& p, TensorMap& t) { split_varlen(p, t, Layout::Ferrum); });
  k.add(ops::split_qkv_norm_rope_into_paged_cache_varlen_vllm,
        [](const PagedSplitVarlenParams& p, TensorMap& t) { split_varlen(p, t, Layout::Vllm); });
}

}  // namespace ts::cpu
