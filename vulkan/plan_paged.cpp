// The paged and kv families' attention ops on the one attention engine (plan_attention.h): each op
// names its sequences (decode lengths, a ragged batch, FlashAttention-2's alignment, a tile list) and
// its pools (ferrum or vLLM layout through block tables; kv_dtype pools dequantized on load). Every
// sequence of a batch runs in the same dispatch (grid z); no op has its own softmax or key split:
// paged_decode_attention_v2's partitions of 512 are the engine's own key split, merged in key order.
#include <algorithm>

#include "core/ops/paged/attention_common.h"
#include "core/ops/paged_params.h"
#include "vulkan/plan_attention.h"

namespace ts::vk {

namespace {

using paged::Layout;

// What every paged op shares: heads, pools ("k_pool", "v_pool") and block tables.
Attn pooled(const PagedPoolParams& p, Layout layout, int64_t seqs, const Target& tg) {
  Attn a{.q = "q", .k1 = "k_pool", .k2 = "k_pool", .v = "v_pool", .batch = seqs, .nh = p.num_heads,
         .nkv = p.num_kv_heads, .dqk = p.head_dim, .dk1 = p.head_dim, .dv = p.head_dim, .causal = true,
         .scale = p.softmax_scale()};
  a.addr = layout == Layout::Vllm ? KvAddr::VLLM : KvAddr::FERRUM;
  a.tables = "block_tables";
  a.block_size = p.block_size, a.width = p.max_num_blocks_per_seq;
  if (layout == Layout::Vllm) a.x = p.x ? p.x : paged::vllm_x(tg.dtype);
  return a;
}

// Decode (q [S, nh, hd], sequence s seeing [0, lens[s])) or one sequence's causal prefill (q [nh,
// q_len, hd]): the rows end at the sequence's length.
std::vector<Dispatch> decode(const PagedPoolParams& p, Layout layout, int64_t seqs, int64_t q_len, const char* lens,
                             int64_t capacity, const Target& tg) {
  Attn a = pooled(p, layout, seqs, tg);
  a.seqs = Seqs::LENS, a.kv_lens = lens, a.q_len = q_len, a.capacity = capacity;
  return attn(tg, a, false);
}

// A ragged batch: rows per sequence from cu_seqlens_q, which the shader reads (its flat list of row
// blocks is sized from total_q_tokens and num_seqs, never from the lengths).
std::vector<Dispatch> varlen(const PagedVarlenParams& p, Layout layout, bool fa2, const Target& tg) {
  Attn a = pooled(p, layout, p.num_seqs, tg);
  a.seqs = fa2 ? Seqs::FA2 : Seqs::VARLEN, a.kv_lens = "cu_seqlens_q", a.seq2 = fa2 ? "seq_lens" : "pos_offsets";
  a.q_len = 0, a.capacity = p.max_kv_len, a.total_q = p.total_q_tokens;
  if (fa2) a.lse = "lse";
  return attn(tg, a, false);
}

// Head sizes the engine's build takes (attention.comp's HD_MAX).
Support head_dim_fits(int64_t hd) {
  if (hd <= 256) return Support::yes();
  return Support::no(fmt::format("head_dim {} is above the Vulkan attention kernel's 256", hd));
}

template <class P> std::function<Support(const Problem&)> fits() {
  return [](const Problem& pr) { return head_dim_fits(pr.params.as<P>().head_dim); };
}

}  // namespace

void add_paged_planners(PlannerTable& t) {
  add_planner(
      t, ops::paged_decode_attention,
      [](const PagedDecodeParams& p, const Decls&, const Target& tg) {
        return decode(p, Layout::Ferrum, p.num_seqs, p.q_len, "context_lens", p.max_num_blocks_per_seq * p.block_size,
                      tg);
      },
      fits<PagedDecodeParams>());
  add_planner(
      t, ops::paged_varlen_attention_vllm_layout,
      [](const PagedDecodeParams& p, const Decls&, const Target& tg) {
        return decode(p, Layout::Vllm, p.num_seqs, p.q_len, "context_lens", p.max_num_blocks_per_seq * p.block_size,
                      tg);
      },
      fits<PagedDecodeParams>());
  add_planner(
      t, ops::paged_decode_attention_v2,
      [](const PagedDecodeV2Params& p, const Decls&, const Target& tg) {
        return decode(p, Layout::Ferrum, p.num_seqs, 1, "context_lens", p.max_seq_len, tg);
      },
      fits<PagedDecodeV2Params>());
  add_planner(
      t, ops::paged_batched_decode_attention,
      [](const PagedBatchedDecodeParams& p, const Decls&, const Target& tg) {
        return decode(p, Layout::Ferrum, p.num_seqs, 1, "valid_kv_lens", p.max_kv_len, tg);
      },
      fits<PagedBatchedDecodeParams>());
  add_planner(
      t, ops::paged_varlen_attention,
      [](const PagedVarlenParams& p, const Decls&, const Target& tg) {
        return varlen(p, Layout::Ferrum, false, tg);
      },
      fits<PagedVarlenParams>());
  add_planner(
      t, ops::paged_varlen_attention_vllm,
      [](const PagedVarlenParams& p, const Decls&, const Target& tg) {
        return varlen(p, Layout::Vllm, false, tg);
      },
      fits<PagedVarlenParams>());
  add_planner(
      t, ops::paged_varlen_attention_fa2_ffi,
      [](const PagedVarlenParams& p, const Decls&, const Target& tg) {
        return varlen(p, Layout::Ferrum, true, tg);
      },
      fits<PagedVarlenParams>());
  add_planner(
      t, ops::paged_varlen_attention_vllm_tiled_q4,
      [](const PagedVarlenTiledParams& p, const Decls&, const Target& tg) -> std::vector<Dispatch> {
        // One work group row per tile (grid z): rows the tile list leaves out are never written.
        if (p.num_tiles == 0) return {};
        Attn a = pooled(p, Layout::Vllm, p.num_tiles, tg);
        a.seqs = Seqs::TILES, a.kv_lens = "cu_seqlens_q", a.seq2 = "pos_offsets", a.tile_seqs = "tile_seqs";
        a.tile_starts = "tile_starts", a.q_len = 4, a.capacity = p.max_kv_len;
        return attn(tg, a, false);
      },
      fits<PagedVarlenTiledParams>());
  add_planner(
      t, ops::kv_paged_decode_attention,
      [](const KvPagedDecodeParams& p, const Decls&, const Target& tg) {
        // One sequence (the table's), its pools of packed kv_dtype elements.
        Attn a{.q = "q", .k1 = "layer_k", .k2 = "layer_k", .v = "layer_v", .kv_len = p.valid_kv_len,
               .nh = p.num_q_heads, .nkv = p.num_kv_heads, .dqk = p.head_dim, .dk1 = p.head_dim, .dv = p.head_dim,
               .scale = p.scale};
        a.out = "output", a.addr = KvAddr::FERRUM, a.tables = "block_table";
        a.block_size = p.block_size, a.width = p.num_table;
        a.packed = true, a.kind = p.kv_dtype;
        if (has_scales(p.kv_dtype)) a.k_scales = "layer_k_scales", a.v_scales = "layer_v_scales";
        return attn(tg, a, false);
      },
      [](const Problem& pr) {
        const auto& p = pr.params.as<KvPagedDecodeParams>();
        // The pools are read as 32-bit words: a kv head's row must fill whole words.
        if (p.head_dim % 4) return Support::no(fmt::format("head_dim {} is not a multiple of 4", p.head_dim));
        return head_dim_fits(p.head_dim);
      });
}

}  // namespace ts::vk
