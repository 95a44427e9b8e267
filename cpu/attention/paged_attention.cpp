// The paged and kv families' attention ops on cpu: each is rows and K/V views handed to the one
// attention engine (cpu/attention/attention_run.h), whose paged view finds a position's key and value through
// the block table, in ferrum's or vLLM's layout, dequantizing I8 and F8_E4M3 pools on load. No op has
// its own softmax, GQA sharing or key split.
#include <algorithm>
#include <functional>
#include <vector>

#include "core/ops/paged/attention_view.h"
#include "core/ops/paged_params.h"
#include "core/ops/view_of.h"
#include "cpu/attention/attention_run.h"
#include "cpu/attention/int8_scores.h"
#include "cpu/kernels.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/convert.h"

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

Pools pools(const paged::PoolView& v, TensorMap& t) {
  Pools p{tensor(t, v.k), tensor(t, v.v), v.layout(), v.kv_heads, v.block_size, v.head_dim, v.x};
  if (!v.k_scales.empty()) p.k_scales = &tensor(t, v.k_scales), p.v_scales = &tensor(t, v.v_scales);
  return p;
}

// Every attention op of the two families through its view (core/ops/paged/attention_view.h), made at
// prepare: a block per (sequence, kv head, run of positions that fills a block's rows with the GQA
// group), each query row over its visible prefix. Rows no sequence (no tile) covers are left unwritten.
// The run walks the sequences in the tensors as they are at execute, allocating nothing. `int8_route`
// (given the widened queries and the case's tensors): whether this execute scores an I8 pool's keys in
// int8 (cpu/attention/int8_scores.h); the scales are checked as the kernel reads them
// (AttentionRun::int8_queries).
using Int8Route = std::function<bool(const float* q, const TensorMap& t)>;
HostRun attention(paged::AttentionView v, TensorMap& t, Int8Route int8_route = {}) {
  return [v = std::move(v), &t, int8_route = std::move(int8_route)] {
    Tensor& out = tensor(t, v.out);
    const size_t es = dtype_size(out.dtype());
    const auto q = widen_all(tensor(t, v.q));
    float* lse = v.lse.empty() ? nullptr : tensor(t, v.lse).as<float>();
    const Pools pl = pools(v.pool, t);
    const uint32_t* tables = tensor(t, v.pool.tables).as<uint32_t>();
    const int64_t hd = v.head_dim, group = v.num_heads / v.pool.kv_heads, total = v.seq.total_q;
    const int64_t positions = std::max<int64_t>(1, kRowsPerBlock / group);
    AttentionRun run(pl.k.dtype(), out.dtype(), v.scale);
    if (int8_route && int8_route(q.data(), t)) run.int8_queries();
    paged::for_each_sequence(v, t, [&](const paged::SeqRows& s) {
      for (int64_t kh = 0; kh < v.pool.kv_heads; ++kh)
        for (int64_t i0 = 0; i0 < s.rows; i0 += positions) {
          run.block(pl.view(kh, tables + s.table * v.pool.width));
          for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
            for (int64_t i = i0; i < std::min(s.rows, i0 + positions); ++i) {
              const int64_t row = v.row(s.row0 + i, h);
              run.row(q.data() + row * hd, 0, s.visible(i), out.data() + row * hd * es,
                      lse ? lse + h * total + s.row0 + i : nullptr);
            }
        }
    });
    run.run();
  };
}

// One registration line per op: its view is its description's.
template <class P> void add(KernelTable& k, const OpRef<P>& op) {
  k.add_prepared(op, [op](const P& p, TensorMap& t) { return attention(view_of<paged::AttentionView>(op, p), t); });
}

}  // namespace

void add_paged_attention(KernelTable& k) {
#define TS_ADD(op) add(k, ops::op);
  TS_ATTENTION_VIEW_OPS(TS_ADD)  // v2's partitions of 512: the engine's own key split merges in order
#undef TS_ADD
  // kv_paged_decode_attention again, replacing its plain registration: I8 pools with enough keys score
  // in int8 (cpu/attention/int8_scores.h), judged by that route's own bound.
  k.add_prepared(
      ops::kv_paged_decode_attention,
      [](const KvPagedDecodeParams& p, TensorMap& t) {
        return attention(view_of<paged::AttentionView>(ops::kv_paged_decode_attention, p), t,
                         [p](const float* q, const TensorMap& in) {
                           return int8_scores(in.at("layer_k").dtype(), p.valid_kv_len, p.head_dim) &&
                                  int8_route_queries(p, q);
                         });
      },
      {}, [](const Problem& pr, const std::string&, const TensorMap& in) { return int8_score_tolerance(pr, in); });
}

}  // namespace ts::cpu
