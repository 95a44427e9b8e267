// Reference: the paged family's attention ops and kv_paged_decode_attention. Each sequence's keys and
// values are gathered out of the pool through its block table (dequantized for I8 / F8_E4M3 pools),
// then every query row goes through the one softmax attention of reference/attend.h. A row's visible
// keys are always a prefix [0, n) of its sequence's positions.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged/attention_common.h"
#include "core/ops/paged/attention_view.h"
#include "core/ops/view_of.h"
#include "reference/attend.h"
#include "reference/reference.h"

namespace ts::ref {
namespace {

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

PoolTensors pools(const paged::PoolView& v, const TensorMap& t) {
  return {v.geometry(), t.at(v.k), t.at(v.v), v.k_scales.empty() ? nullptr : &t.at(v.k_scales),
          v.v_scales.empty() ? nullptr : &t.at(v.v_scales)};
}

// Every attention op of the two families, through its view (core/ops/paged/attention_view.h): each
// sequence's keys and values per kv head gathered once, then each of its query rows of each head of
// the group over its visible prefix. Rows no sequence (no tile) covers are left zero; lse [nh, total_q]
// where the view names it.
void attention(const paged::AttentionView& v, TensorMap& t) {
  const auto q = to_f64(t.at(v.q));
  const PoolTensors pt = pools(v.pool, t);
  const uint32_t* tables = t.at(v.pool.tables).as<uint32_t>();
  const int64_t hd = v.head_dim, group = v.num_heads / v.pool.kv_heads, total = v.seq.total_q;
  std::vector<double> out(q.size()), lses(v.lse.empty() ? 0 : static_cast<size_t>(v.num_heads * total));
  paged::for_each_sequence(v, t, [&](const paged::SeqRows& s) {
    for (int64_t kh = 0; kh < v.pool.kv_heads; ++kh) {
      const KvRows kv = pt.gather(tables + s.table * v.pool.width, kh, s.kv);
      for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
        for (int64_t i = 0; i < s.rows; ++i) {
          const int64_t row = v.row(s.row0 + i, h);
          const double lse = attend_rows(q.data() + row * hd, kv.k.data(), kv.v.data(), s.visible(i), hd, v.scale,
                                         out.data() + row * hd);
          if (!lses.empty()) lses[static_cast<size_t>(h * total + s.row0 + i)] = lse;
        }
    }
  });
  from_f64(t.at(v.out), out);
  if (!v.lse.empty()) from_f64(t.at(v.lse), lses);
}

template <class P> void attention(const OpRef<P>& op, const P& p, TensorMap& t) {
  attention(view_of<paged::AttentionView>(op, p), t);
}

}  // namespace

// Every op of the list is its view's attention (v2's partitions of 512 change how a kernel reduces,
// not what it computes; a tile list's rows are those its tiles cover).
#define TS_REF(op) \
  void op(const std::decay_t<decltype(ops::op)>::Params& p, TensorMap& t) { attention(ops::op, p, t); }
TS_ATTENTION_VIEW_OPS(TS_REF)
#undef TS_REF

}  // namespace ts::ref
