// The paged and kv families' attention ops on cpu: each is rows and K/V views handed to the one
// attention engine (cpu/attention_run.h), whose paged view finds a position's key and value through
// the block table, in ferrum's or vLLM's layout, dequantizing I8 and F8_E4M3 pools on load. No op has
// its own softmax, GQA sharing or key split.
#include <algorithm>
#include <vector>

#include "core/ops/paged/attention_common.h"
#include "core/ops/paged_params.h"
#include "cpu/attention_run.h"
#include "cpu/common.h"
#include "cpu/convert.h"
#include "cpu/int8_scores.h"
#include "cpu/kernels.h"

namespace ts::cpu {
namespace {

using paged::Layout;

// The pools of an op as views, one per kv head: where a head's rows start in a block, the distance
// between blocks, and the layout's addressing inside a block.
struct Pools {
  const Tensor& k;
  const Tensor& v;
  Layout layout;
  int64_t kv_heads, block_size, head_dim, x;
  const Tensor* k_scales = nullptr;
  const Tensor* v_scales = nullptr;

  KvView view(int64_t h, const uint32_t* table) const {
    const size_t es = dtype_size(k.dtype());
    const int64_t head = block_size * head_dim;  // elements of one kv head in a block, either layout
    KvView kv{k.data() + h * head * es, head_dim, nullptr, 0, v.data() + h * head * es, head_dim,
              head_dim, 0, head_dim};
    kv.paging = {table, block_size, kv_heads * head, kv_heads * head, layout == Layout::Vllm ? x : 0,
                 layout == Layout::Vllm, nullptr, nullptr, kv_heads * block_size};
    if (k_scales) kv.paging.k_scale = k_scales->as<float>() + h * block_size;
    if (v_scales) kv.paging.v_scale = v_scales->as<float>() + h * block_size;
    return kv;
  }
};

Pools pools(const PagedPoolParams& p, Layout layout, TensorMap& t) {
  return {tensor(t, "k_pool"), tensor(t, "v_pool"), layout, p.num_kv_heads, p.block_size, p.head_dim, p.x};
}

ScratchVector<int64_t> lens(TensorMap& t, const char* name) { return values(tensor(t, name)); }

// Decode (q [S, nh, hd]: sequence s sees [0, lens[s])) or one sequence's causal prefill (q [nh, q_len,
// hd]: row i sees [0, lens[0] - q_len + 1 + i)), a block per (sequence, kv head, run of positions).
void decode(const PagedPoolParams& p, const Pools& pl, TensorMap& t, int64_t num_seqs, int64_t q_len,
            const ScratchVector<int64_t>& len) {
  Tensor& out = tensor(t, "out");
  const size_t es = dtype_size(out.dtype());
  const auto q = widen_all(tensor(t, "q"));
  const uint32_t* tables = tensor(t, "block_tables").as<uint32_t>();
  const int64_t hd = p.head_dim, group = p.num_heads / p.num_kv_heads;
  const int64_t positions = std::max<int64_t>(1, kRowsPerBlock / group);
  AttentionRun run(pl.k.dtype(), out.dtype(), p.softmax_scale());
  for (int64_t s = 0; s < num_seqs; ++s)
    for (int64_t kh = 0; kh < p.num_kv_heads; ++kh)
      for (int64_t i0 = 0; i0 < q_len; i0 += positions) {
        run.block(pl.view(kh, tables + s * p.max_num_blocks_per_seq));
        for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
          for (int64_t i = i0; i < std::min(q_len, i0 + positions); ++i) {
            const int64_t row = q_len == 1 ? s * p.num_heads + h : h * q_len + i;
            run.row(q.data() + row * hd, 0, q_len == 1 ? len[s] : len[s] - q_len + 1 + i, out.data() + row * hd * es);
          }
      }
  run.run();
}

// A ragged batch: sequence s owns rows cu[s] .. cu[s+1], its row i seeing [0, first[s] + i + 1);
// only rows marked in `rows`; lse [nh, total] when given.
void varlen(const PagedPoolParams& p, const Pools& pl, TensorMap& t, bool fa2, const std::vector<uint8_t>* rows) {
  Tensor& out = tensor(t, "out");
  const size_t es = dtype_size(out.dtype());
  const auto q = widen_all(tensor(t, "q"));
  const auto cu = lens(t, "cu_seqlens_q");
  const auto second = lens(t, fa2 ? "seq_lens" : "pos_offsets");
  float* lse = fa2 ? tensor(t, "lse").as<float>() : nullptr;
  const uint32_t* tables = tensor(t, "block_tables").as<uint32_t>();
  const int64_t hd = p.head_dim, group = p.num_heads / p.num_kv_heads, total = cu.back();
  const int64_t positions = std::max<int64_t>(1, kRowsPerBlock / group);
  AttentionRun run(pl.k.dtype(), out.dtype(), p.softmax_scale());
  for (size_t s = 0; s + 1 < cu.size(); ++s) {
    const int64_t n = cu[s + 1] - cu[s], first = paged::seq_span(fa2, n, second[s]).first;
    for (int64_t kh = 0; kh < p.num_kv_heads; ++kh)
      for (int64_t i0 = 0; i0 < n; i0 += positions) {
        run.block(pl.view(kh, tables + s * p.max_num_blocks_per_seq));
        for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
          for (int64_t i = i0; i < std::min(n, i0 + positions); ++i) {
            const int64_t r = cu[s] + i, row = r * p.num_heads + h;
            if (rows && !(*rows)[r]) continue;
            run.row(q.data() + row * hd, 0, std::max<int64_t>(0, first + i + 1), out.data() + row * hd * es,
                    lse ? lse + h * total + r : nullptr);
          }
      }
  }
  run.run();
}

void paged_decode_attention(const PagedDecodeParams& p, TensorMap& t) {
  decode(p, pools(p, Layout::Ferrum, t), t, p.num_seqs, p.q_len, lens(t, "context_lens"));
}
void paged_decode_attention_v2(const PagedDecodeV2Params& p, TensorMap& t) {
  // The engine already cuts long contexts into fixed key ranges and merges them in order: v2's
  // partitions of 512 are its own.
  decode(p, pools(p, Layout::Ferrum, t), t, p.num_seqs, 1, lens(t, "context_lens"));
}
void paged_varlen_attention_vllm_layout(const PagedDecodeParams& p, TensorMap& t) {
  decode(p, pools(p, Layout::Vllm, t), t, p.num_seqs, p.q_len, lens(t, "context_lens"));
}
void paged_batched_decode_attention(const PagedBatchedDecodeParams& p, TensorMap& t) {
  decode(p, pools(p, Layout::Ferrum, t), t, p.num_seqs, 1, lens(t, "valid_kv_lens"));
}
void paged_varlen_attention(const PagedVarlenParams& p, TensorMap& t) {
  varlen(p, pools(p, Layout::Ferrum, t), t, false, nullptr);
}
void paged_varlen_attention_vllm(const PagedVarlenParams& p, TensorMap& t) {
  varlen(p, pools(p, Layout::Vllm, t), t, false, nullptr);
}
void paged_varlen_attention_fa2_ffi(const PagedVarlenParams& p, TensorMap& t) {
  varlen(p, pools(p, Layout::Ferrum, t), t, true, nullptr);
}
// Rows no tile covers are left unwritten, as the op defines.
void paged_varlen_attention_vllm_tiled_q4(const PagedVarlenTiledParams& p, TensorMap& t) {
  const std::vector<uint8_t> rows = paged::tiled_rows(t, p.num_tiles);
  varlen(p, pools(p, Layout::Vllm, t), t, false, &rows);
}

void kv_paged_decode_attention(const KvPagedDecodeParams& p, TensorMap& t) {
  Pools pl{tensor(t, "layer_k"), tensor(t, "layer_v"), Layout::Ferrum, p.num_kv_heads, p.block_size, p.head_dim, 0};
  if (has_scales(p.kv_dtype)) pl.k_scales = &tensor(t, "layer_k_scales"), pl.v_scales = &tensor(t, "layer_v_scales");
  Tensor& out = tensor(t, "output");
  const size_t es = dtype_size(out.dtype());
  const auto q = widen_all(tensor(t, "q"));
  const int64_t group = p.num_q_heads / p.num_kv_heads;
  AttentionRun run(pl.k.dtype(), out.dtype(), p.scale);
  if (int8_scores(pl.k.dtype(), p.valid_kv_len, p.head_dim) && int8_route_data(p, q.data(), t)) run.int8_queries();
  for (int64_t kh = 0; kh < p.num_kv_heads; ++kh) {
    run.block(pl.view(kh, tensor(t, "block_table").as<uint32_t>()));
    for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
      run.row(q.data() + h * p.head_dim, 0, p.valid_kv_len, out.data() + h * p.head_dim * es);
  }
  run.run();
}

}  // namespace

void add_paged_attention(KernelTable& k) {
  k.add(ops::paged_decode_attention, paged_decode_attention);
  k.add(ops::paged_decode_attention_v2, paged_decode_attention_v2);
  k.add(ops::paged_varlen_attention, paged_varlen_attention);
  k.add(ops::paged_varlen_attention_vllm, paged_varlen_attention_vllm);
  k.add(ops::paged_varlen_attention_vllm_layout, paged_varlen_attention_vllm_layout);
  k.add(ops::paged_varlen_attention_vllm_tiled_q4, paged_varlen_attention_vllm_tiled_q4);
  k.add(ops::paged_varlen_attention_fa2_ffi, paged_varlen_attention_fa2_ffi);
  k.add(ops::paged_batched_decode_attention, paged_batched_decode_attention);
  // I8 pools with enough keys score in int8 (cpu/int8_scores.h), judged by that route's own bound.
  k.add(ops::kv_paged_decode_attention, kv_paged_decode_attention, {},
        [](const Problem& pr, const std::string&, const TensorMap& in) { return int8_score_tolerance(pr, in); });
}

}  // namespace ts::cpu
