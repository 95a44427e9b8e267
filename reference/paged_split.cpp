// Reference: the paged family's split ops and kv_append_paged. The split is the core family's
// (reference/split_rope.h); here only where each head vector lands: q in q_out, k and v at their
// position's slot of the block its table names.
#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged/attention_common.h"
#include "reference/reference.h"
#include "reference/split_rope.h"

namespace ts::ref {
namespace {

using paged::Layout;
using paged::Pool;

// Writes head vector `x` of kv head h at position `pos` of the sequence whose blocks `blocks` lists.
void put_key(Tensor& pool_t, const Pool& pool, paged::SeqBlocks blocks, int64_t h, int64_t pos, const std::vector<double>& x) {
  for (int64_t d = 0; d < pool.head_dim; ++d) pool_t.set(pool.key_index(blocks.block(pos), h, blocks.slot(pos), d), x[d]);
}
void put_value(Tensor& pool_t, const Pool& pool, paged::SeqBlocks blocks, int64_t h, int64_t pos, const std::vector<double>& x) {
  for (int64_t d = 0; d < pool.head_dim; ++d) pool_t.set(pool.value_index(blocks.block(pos), h, blocks.slot(pos), d), x[d]);
}

Pool pool_of(Layout layout, int64_t num_blocks, int64_t kv_heads, int64_t block_size, int64_t head_dim, int64_t x) {
  return {layout, num_blocks, kv_heads, block_size, head_dim, layout == Layout::Vllm ? x : 1};
}

void split_single(const PagedSplitParams& p, Layout layout, TensorMap& t) {
  const int64_t es = static_cast<int64_t>(dtype_size(t.at("qkv").dtype())), hd = p.head_dim;
  const int64_t q_first = p.q_out_byte_offset / es;
  const Pool pool = pool_of(layout, p.num_blocks, p.kv_heads, p.block_size, hd, p.x);
  const paged::SeqBlocks blocks{t.at("block_table").as<uint32_t>(), p.block_size};
  Tensor &q_out = t.at("q_out"), &ck = t.at("cache_k"), &cv = t.at("cache_v");
  split_norm_rope(
      p, t, p.qkv_byte_offset / es,
      [&](int64_t h, int64_t tok, const std::vector<double>& q) {
        for (int64_t d = 0; d < hd; ++d) q_out.set(q_first + (h * p.tokens + tok) * hd + d, q[d]);
      },
      [&](int64_t h, int64_t tok, const std::vector<double>& k) { put_key(ck, pool, blocks, h, p.cache_len + tok, k); },
      [&](int64_t h, int64_t tok, const std::vector<double>& v) { put_value(cv, pool, blocks, h, p.cache_len + tok, v); });
}

void split_varlen(const PagedSplitVarlenParams& p, Layout layout, TensorMap& t) {
  const auto cu = paged::lengths(t, "cu_seqlens_q");
  const auto pos = paged::lengths(t, "pos_offsets");
  const int64_t hd = p.head_dim, width = (p.q_heads + 2 * p.kv_heads) * hd;
  const Pool pool = pool_of(layout, p.num_blocks, p.kv_heads, p.block_size, hd, p.x);
  const uint32_t* tables = t.at("block_tables").as<uint32_t>();
  Tensor &q_out = t.at("q_out"), &ck = t.at("cache_k"), &cv = t.at("cache_v");
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    // Sequence s alone: its rows, at its positions.
    const SplitQkvNormRopeParams one{.tokens = cu[s + 1] - cu[s], .q_heads = p.q_heads, .kv_heads = p.kv_heads,
                                     .head_dim = hd, .pos_offset = pos[s], .eps = p.eps, .qk_mode = p.qk_mode,
                                     .rotary_dim = p.rotary_dim, .max_pos = p.max_pos};
    const paged::SeqBlocks blocks{tables + s * p.max_blocks_per_seq, p.block_size};
    split_norm_rope(
        one, t, cu[s] * width,
        [&](int64_t h, int64_t tok, const std::vector<double>& q) {
          for (int64_t d = 0; d < hd; ++d) q_out.set(((cu[s] + tok) * p.q_heads + h) * hd + d, q[d]);
        },
        [&](int64_t h, int64_t tok, const std::vector<double>& k) { put_key(ck, pool, blocks, h, pos[s] + tok, k); },
        [&](int64_t h, int64_t tok, const std::vector<double>& v) { put_value(cv, pool, blocks, h, pos[s] + tok, v); });
  }
}

}  // namespace

void split_qkv_norm_rope_into_paged_cache(const PagedSplitParams& p, TensorMap& t) { split_single(p, Layout::Ferrum, t); }
void split_qkv_norm_rope_into_paged_cache_vllm(const PagedSplitParams& p, TensorMap& t) { split_single(p, Layout::Vllm, t); }
void split_qkv_norm_rope_into_paged_cache_varlen(const PagedSplitVarlenParams& p, TensorMap& t) {
  split_varlen(p, Layout::Ferrum, t);
}
void split_qkv_norm_rope_into_paged_cache_varlen_vllm(const PagedSplitVarlenParams& p, TensorMap& t) {
  split_varlen(p, Layout::Vllm, t);
}

void kv_append_paged(const KvAppendPagedParams& p, TensorMap& t) {
  const Pool pool{Layout::Ferrum, p.num_blocks, p.num_kv_heads, p.block_size, p.head_dim, 1};
  const paged::SeqBlocks blocks{t.at("paged_block_indices").as<uint32_t>(), p.block_size};
  const bool scaled = has_scales(p.kv_dtype);
  for (const char* side : {"k", "v"}) {
    const float* x = t.at(fmt::format("{}_in", side)).as<float>();
    Tensor& elems = t.at(fmt::format("layer_{}", side));
    for (int64_t tok = 0; tok < p.tokens; ++tok)
      for (int64_t h = 0; h < p.num_kv_heads; ++h) {
        const int64_t pos = p.cache_len_before + tok, b = blocks.block(pos), s = blocks.slot(pos);
        const float scale = kvq::store_row(p.kv_dtype, x + (tok * p.num_kv_heads + h) * p.head_dim, p.head_dim, elems,
                                           pool.key_index(b, h, s, 0));
        if (scaled) t.at(fmt::format("layer_{}_scales", side)).set((b * p.num_kv_heads + h) * p.block_size + s, scale);
      }
  }
}

}  // namespace ts::ref
