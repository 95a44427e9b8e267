// Reference: the paged family's attention ops and kv_paged_decode_attention. Each sequence's keys and
// values are gathered out of the pool through its block table (dequantized for I8 / F8_E4M3 pools),
// then every query row goes through the one softmax attention of reference/attend.h. A row's visible
// keys are always a prefix [0, n) of its sequence's positions.
#include <algorithm>
#include <limits>

#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged/attention_common.h"
#include "reference/attend.h"
#include "reference/reference.h"

namespace ts::ref {
namespace {

using paged::Layout;
using paged::Pool;

// A sequence's keys and values of one kv head, positions [0, n), as [n, head_dim] rows.
struct KvRows {
  std::vector<double> k, v;
};

// The pools of an op: elements, and for quantized pools the F32 scale of each (block, kv head, slot).
struct PoolTensors {
  Pool geometry;
  const Tensor& k;
  const Tensor& v;
  const Tensor* k_scales = nullptr;
  const Tensor* v_scales = nullptr;

  KvRows gather(const uint32_t* table, int64_t h, int64_t n) const {
    const Pool& g = geometry;
    const int64_t hd = g.head_dim;
    KvRows r{std::vector<double>(static_cast<size_t>(n * hd)), std::vector<double>(static_cast<size_t>(n * hd))};
    const paged::SeqBlocks blocks{table, g.block_size};
    for (int64_t p = 0; p < n; ++p) {
      const int64_t b = blocks.block(p), s = blocks.slot(p), si = (b * g.kv_heads + h) * g.block_size + s;
      const double ks = k_scales ? k_scales->get(si) : 1.0, vs = v_scales ? v_scales->get(si) : 1.0;
      for (int64_t d = 0; d < hd; ++d) {
        r.k[p * hd + d] = kvq::load(k, g.key_index(b, h, s, d), ks, k_scales != nullptr);
        r.v[p * hd + d] = kvq::load(v, g.value_index(b, h, s, d), vs, v_scales != nullptr);
      }
    }
    return r;
  }
};

PoolTensors pools(const PagedPoolParams& p, Layout layout, const TensorMap& t) {
  return {paged::pool_of(p, layout), t.at("k_pool"), t.at("v_pool")};
}

// Decode (q [S, nh, hd], sequence s sees [0, lens[s])) or one sequence's causal prefill (q [nh, q_len,
// hd], row i sees [0, lens[0] - q_len + 1 + i)).
void decode(const PagedPoolParams& p, Layout layout, TensorMap& t, int64_t num_seqs, int64_t q_len,
            const std::vector<int64_t>& lens) {
  const auto q = to_f64(t.at("q"));
  const PoolTensors pt = pools(p, layout, t);
  const uint32_t* tables = t.at("block_tables").as<uint32_t>();
  const int64_t hd = p.head_dim, group = p.num_heads / p.num_kv_heads;
  std::vector<double> out(q.size());
  for (int64_t s = 0; s < num_seqs; ++s)
    for (int64_t kh = 0; kh < p.num_kv_heads; ++kh) {
      const KvRows kv = pt.gather(tables + s * p.max_num_blocks_per_seq, kh, lens[s]);
      for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
        for (int64_t i = 0; i < q_len; ++i) {
          const int64_t row = q_len == 1 ? s * p.num_heads + h : h * q_len + i;
          const int64_t n = q_len == 1 ? lens[s] : lens[s] - q_len + 1 + i;
          attend_rows(q.data() + row * hd, kv.k.data(), kv.v.data(), n, hd, p.softmax_scale(), out.data() + row * hd);
        }
    }
  from_f64(t.at("out"), out);
}

// A ragged batch: sequence s owns rows cu[s] .. cu[s+1] and kv length kv[s]; its row i sees
// [0, first[s] + i + 1). Rows where `rows` is 0 are left zero; `lse` [nh, total_q] when given.
void varlen(const PagedPoolParams& p, Layout layout, TensorMap& t, const std::vector<int64_t>& kv,
            const std::vector<int64_t>& first, const std::vector<uint8_t>& rows, Tensor* lse) {
  const auto q = to_f64(t.at("q"));
  const auto cu = paged::lengths(t, "cu_seqlens_q");
  const PoolTensors pt = pools(p, layout, t);
  const uint32_t* tables = t.at("block_tables").as<uint32_t>();
  const int64_t hd = p.head_dim, group = p.num_heads / p.num_kv_heads, total = cu.back();
  std::vector<double> out(q.size()), lses(static_cast<size_t>(p.num_heads * total));
  for (size_t s = 0; s + 1 < cu.size(); ++s)
    for (int64_t kh = 0; kh < p.num_kv_heads; ++kh) {
      const KvRows kvr = pt.gather(tables + s * p.max_num_blocks_per_seq, kh, kv[s]);
      for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
        for (int64_t i = cu[s]; i < cu[s + 1]; ++i) {
          if (!rows[i]) continue;
          const int64_t n = std::max<int64_t>(0, first[s] + (i - cu[s]) + 1), row = i * p.num_heads + h;
          lses[h * total + i] = attend_rows(q.data() + row * hd, kvr.k.data(), kvr.v.data(), n, hd, p.softmax_scale(),
                                            out.data() + row * hd);
        }
    }
  from_f64(t.at("out"), out);
  if (lse) from_f64(*lse, lses);
}

// Each sequence's kv length and its first row's position, from pos_offsets (rows at pos + i) or
// seq_lens (FlashAttention-2: rows at seq_len - n + i).
void varlen_positions(const TensorMap& t, bool fa2, std::vector<int64_t>& kv, std::vector<int64_t>& first) {
  const auto cu = paged::lengths(t, "cu_seqlens_q");
  const auto second = paged::lengths(t, fa2 ? "seq_lens" : "pos_offsets");
  kv.resize(second.size()), first.resize(second.size());
  for (size_t s = 0; s < second.size(); ++s) {
    const int64_t n = cu[s + 1] - cu[s];
    const paged::SeqSpan span = paged::seq_span(fa2, n, second[s]);
    kv[s] = span.kv, first[s] = span.first;
  }
}

void varlen_op(const PagedPoolParams& p, Layout layout, TensorMap& t, bool fa2, const std::vector<uint8_t>& rows) {
  std::vector<int64_t> kv, first;
  varlen_positions(t, fa2, kv, first);
  varlen(p, layout, t, kv, first, rows, fa2 ? &t.at("lse") : nullptr);
}

std::vector<uint8_t> all_rows(const TensorMap& t) {
  return std::vector<uint8_t>(static_cast<size_t>(t.at("q").shape()[0]), 1);
}

}  // namespace

void paged_decode_attention(const PagedDecodeParams& p, TensorMap& t) {
  decode(p, Layout::Ferrum, t, p.num_seqs, p.q_len, paged::lengths(t, "context_lens"));
}

// v2's partitions of 512 change how a kernel reduces, not what it computes.
void paged_decode_attention_v2(const PagedDecodeV2Params& p, TensorMap& t) {
  decode(p, Layout::Ferrum, t, p.num_seqs, 1, paged::lengths(t, "context_lens"));
}

void paged_varlen_attention_vllm_layout(const PagedDecodeParams& p, TensorMap& t) {
  decode(p, Layout::Vllm, t, p.num_seqs, p.q_len, paged::lengths(t, "context_lens"));
}

void paged_varlen_attention(const PagedVarlenParams& p, TensorMap& t) {
  varlen_op(p, Layout::Ferrum, t, false, all_rows(t));
}

void paged_varlen_attention_vllm(const PagedVarlenParams& p, TensorMap& t) {
  varlen_op(p, Layout::Vllm, t, false, all_rows(t));
}

// A row is computed when some tile covers it.
void paged_varlen_attention_vllm_tiled_q4(const PagedVarlenTiledParams& p, TensorMap& t) {
  varlen_op(p, Layout::Vllm, t, false, paged::tiled_rows(t, p.num_tiles));
}

void paged_varlen_attention_fa2_ffi(const PagedVarlenParams& p, TensorMap& t) {
  varlen_op(p, Layout::Ferrum, t, true, all_rows(t));
}

void paged_batched_decode_attention(const PagedBatchedDecodeParams& p, TensorMap& t) {
  decode(p, Layout::Ferrum, t, p.num_seqs, 1, paged::lengths(t, "valid_kv_lens"));
}

void kv_paged_decode_attention(const KvPagedDecodeParams& p, TensorMap& t) {
  const bool scaled = has_scales(p.kv_dtype);
  const PoolTensors pt{Pool{Layout::Ferrum, p.num_blocks, p.num_kv_heads, p.block_size, p.head_dim, 1}, t.at("layer_k"),
                       t.at("layer_v"), scaled ? &t.at("layer_k_scales") : nullptr,
                       scaled ? &t.at("layer_v_scales") : nullptr};
  const auto q = to_f64(t.at("q"));
  const int64_t hd = p.head_dim, group = p.num_q_heads / p.num_kv_heads;
  std::vector<double> out(q.size());
  for (int64_t kh = 0; kh < p.num_kv_heads; ++kh) {
    const KvRows kv = pt.gather(t.at("block_table").as<uint32_t>(), kh, p.valid_kv_len);
    for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
      attend_rows(q.data() + h * hd, kv.k.data(), kv.v.data(), p.valid_kv_len, hd, p.scale, out.data() + h * hd);
  }
  from_f64(t.at("output"), out);
}

}  // namespace ts::ref
