// The decode programs: one token of one sequence through `layers` blocks, as the catalog's ops
// (docs/catalog.md, "Family graph"). Per layer: rms_norm, the q / k / v projections, the split op
// that ropes q and k (Qwen3: after its per-head q / k norms) and writes k and v into the paged pools
// at the step's position (split_qkv_norm_rope_into_paged_cache_varlen: its position and table are
// tensors, so nothing per step is a parameter), paged decode attention over the context, the o
// projection, the residual add, rms_norm, then the ffn and its residual add; the final rms_norm.
// llama_decode's ffn: gate and up, silu(gate) * up, down. qwen3_moe_decode's: the router, top-k, the
// fused gate + up + SiLU expert GEMV, the experts' down GEMV, their weighted sum into the residual.
#include <cmath>

#include "core/error.h"
#include "core/ops/op_refs.h"
#include "core/quant/formats.h"
#include "core/ops/core/rope_common.h"
#include "graph/graph.h"
#include "graph/weights.h"

namespace ts::graph {

namespace {

class Builder {
 public:
  Builder(const std::string& program, const DecodeParams& p, TensorMap& w)
      : p_(p), w_(w), dt_(p.act_dtype()), moe_(program == kQwen3MoeDecode) {
    g_.name = program;
    g_.params = p;
    g_.state = std::make_unique<Tensor>(DType::U32, Shape{p.state_words()});
  }

  template <class P> Node& node(std::string label, OpRef<P> ref, P params) {
    auto n = std::make_unique<Node>();
    n->label = std::move(label);
    n->problem = make_problem(op_or_throw(ref.name), Params::of(std::move(params)), dt_);
    n->io = allocate_from_decls(n->problem.decls);
    g_.nodes.push_back(std::move(n));
    return *g_.nodes.back();
  }
  // The weight `name` into the node's tensor `slot`, moved (a step never copies weights).
  void weight(Node& n, const std::string& slot, const std::string& name) {
    auto it = w_.find(name);
    check(it != w_.end(), "{}: weight '{}' is missing", g_.name, name);
    const Tensor& want = n.io.at(slot);
    check(it->second.dtype() == want.dtype() && it->second.shape() == want.shape(),
          "{}: weight '{}' is {} {}, the program needs {} {}", g_.name, name, dtype_name(it->second.dtype()),
          shape_str(it->second.shape()), dtype_name(want.dtype()), shape_str(want.shape()));
    n.io.at(slot) = std::move(it->second);
    w_.erase(it);
  }
  static void copy(Node& n, const std::string& slot, const Tensor& src, int64_t count, int64_t dst_offset = 0,
                   int64_t src_offset = 0) {
    Tensor& dst = n.io.at(slot);
    check(dst.dtype() == src.dtype(), "{} '{}': bind of a {} tensor into a {} one", n.label, slot, dtype_name(src.dtype()),
          dtype_name(dst.dtype()));
    n.binds.push_back({Bind::Kind::Copy, &dst, &src, src_offset, dst_offset, count});
  }
  static void pool(Node& n, const std::string& slot, int64_t layer, bool value) {
    n.io.at(slot) = Tensor();  // the pool is the cache's; the node takes it for its launch only
    Bind b;
    b.kind = Bind::Kind::Pool, b.dst = &n.io.at(slot), b.layer = layer, b.value = value;
    n.binds.push_back(b);
  }
  // out[1, n] = a[1, k] @ W^T: gemm for plain weights, gemm_quant for GGUF blocks.
  Node& linear(const std::string& name, int64_t n, int64_t k, const Tensor& a) {
    Node* nd;
    if (p_.kind == QuantKind::Q4_K) {
      nd = &node(name, ops::gemm_quant, GemmQuantParams{.kind = p_.kind, .m = 1, .n_rows = n, .n_cols = k});
      weight(*nd, "weight", name);
    } else {
      nd = &node(name, ops::gemm, GemmParams{.m = 1, .n = n, .k = k});
      weight(*nd, "b", name);
    }
    copy(*nd, "a", a, k);
    return *nd;
  }
  Node& norm(const std::string& label, const std::string& w, const Tensor& x) {
    Node& n = node(label, ops::rms_norm, RmsNormParams{.tokens = 1, .dim = p_.hidden, .eps = p_.eps});
    weight(n, "w", w);
    copy(n, "x", x, p_.hidden);
    return n;
  }
  // h += x, h taken from the node that wrote the residual stream last.
  Node& residual(const std::string& label, const Tensor& h, const Tensor& x) {
    Node& n = node(label, ops::add_inplace, AddInplaceParams{{.len = p_.hidden}});
    copy(n, "residual", h, p_.hidden);
    copy(n, "x", x, p_.hidden);
    return n;
  }
  // The state buffer's words into a node's index tensor.
  void state(Node& n, const std::string& slot, int64_t word, int64_t count) { copy(n, slot, *g_.state, count, 0, word); }

  Program build() {
    using namespace state_layout;
    const DecodeParams& p = p_;
    Node& embd = node("token_embd", ops::embedding_lookup,
                      EmbeddingLookupParams{.dim = p.hidden, .vocab = p.vocab, .n = 1});
    weight(embd, "table", "token_embd");
    state(embd, "ids", kToken, 1);
    const Tensor* h = &embd.io.at("out");
    const RopeTables rope = rope_tables(p);
    for (int64_t l = 0; l < p.layers; ++l) {
      const std::string blk = fmt::format("blk.{}.", l);
      Node& n1 = norm(blk + "attn_norm", blk + "attn_norm", *h);
      const Tensor& x1 = n1.io.at("out");
      Node& q = linear(blk + "attn_q", p.q_dim(), p.hidden, x1);
      Node& k = linear(blk + "attn_k", p.kv_dim(), p.hidden, x1);
      Node& v = linear(blk + "attn_v", p.kv_dim(), p.hidden, x1);

      PagedSplitVarlenParams sp{.num_seqs = 1, .m_total = 1, .q_heads = p.heads, .kv_heads = p.kv_heads,
                                .head_dim = p.head_dim, .eps = p.eps, .qk_mode = moe_ ? rope::kNormRope : rope::kRopeOnly,
                                .block_size = p.block_size, .max_blocks_per_seq = p.max_blocks()};
      sp.max_pos = p.max_pos(), sp.num_blocks = p.num_blocks();
      Node& split = node(blk + "rope_kv", ops::split_qkv_norm_rope_into_paged_cache_varlen, sp);
      copy(split, "qkv", q.io.at("out"), p.q_dim());
      copy(split, "qkv", k.io.at("out"), p.kv_dim(), p.q_dim());
      copy(split, "qkv", v.io.at("out"), p.kv_dim(), p.q_dim() + p.kv_dim());
      split.io.at("cos") = rope.cos, split.io.at("sin") = rope.sin;
      if (moe_) {
        weight(split, "q_norm_w", blk + "attn_q_norm");
        weight(split, "k_norm_w", blk + "attn_k_norm");
      } else {
        split.io.at("q_norm_w").fill(1.0), split.io.at("k_norm_w").fill(1.0);  // read only by qk_mode 1
      }
      Tensor& cu = split.io.at("cu_seqlens_q");
      cu.as<uint32_t>()[0] = 0, cu.as<uint32_t>()[1] = 1;
      state(split, "pos_offsets", kPosition, 1);
      state(split, "block_tables", kTable, p.max_blocks());
      pool(split, "cache_k", l, false);
      pool(split, "cache_v", l, true);

      PagedDecodeParams ap;
      ap.num_seqs = 1, ap.q_len = 1, ap.num_heads = p.heads, ap.num_kv_heads = p.kv_heads, ap.head_dim = p.head_dim;
      ap.block_size = p.block_size, ap.max_num_blocks_per_seq = p.max_blocks(), ap.num_blocks = p.num_blocks();
      Node& attn = node(blk + "attention", ops::paged_decode_attention, ap);
      copy(attn, "q", split.io.at("q_out"), p.q_dim());
      state(attn, "block_tables", kTable, p.max_blocks());
      state(attn, "context_lens", kContextLen, 1);
      pool(attn, "k_pool", l, false);
      pool(attn, "v_pool", l, true);

      Node& o = linear(blk + "attn_output", p.hidden, p.q_dim(), attn.io.at("out"));
      Node& r1 = residual(blk + "attn_residual", *h, o.io.at("out"));
      h = &r1.io.at("residual");
      Node& n2 = norm(blk + "ffn_norm", blk + "ffn_norm", *h);
      h = moe_ ? &moe_ffn(blk, *h, n2.io.at("out")) : &dense_ffn(blk, *h, n2.io.at("out"));
    }
    Node& out = norm("output_norm", "output_norm", *h);
    g_.output = &out.io.at("out");
    if (!w_.empty()) fail("{}: tensor '{}' is not a weight of the program", g_.name, w_.begin()->first);
    return std::move(g_);
  }

  // gate and up, silu(gate) * up, down, h += it: the new residual stream.
  const Tensor& dense_ffn(const std::string& blk, const Tensor& h, const Tensor& x) {
    const DecodeParams& p = p_;
    Node& gate = linear(blk + "ffn_gate", p.ffn, p.hidden, x);
    Node& up = linear(blk + "ffn_up", p.ffn, p.hidden, x);
    Node& act = node(blk + "ffn_silu_mul", ops::fused_silu_mul_split, FusedSiluMulSplitParams{.tokens = 1, .im = p.ffn});
    copy(act, "gate_up", gate.io.at("out"), p.ffn);
    copy(act, "gate_up", up.io.at("out"), p.ffn, p.ffn);
    Node& down = linear(blk + "ffn_down", p.hidden, p.ffn, act.io.at("out"));
    return residual(blk + "ffn_residual", h, down.io.at("out")).io.at("residual");
  }

  // The router's logits (an F32 gemm), softmax top-k (renormalised, as Qwen3's norm_topk_prob), the
  // chosen experts' silu(gate) * up in one GEMV, their down GEMVs, h += their weighted sum. The expert
  // ids flow from the router's node to the GEMVs' as values: nothing about them is planned on the host.
  const Tensor& moe_ffn(const std::string& blk, const Tensor& h, const Tensor& x) {
    const DecodeParams& p = p_;
    Node& router = node(blk + "ffn_gate_inp", ops::gemm, GemmParams{.m = 1, .n = p.experts, .k = p.hidden});
    weight(router, "b", blk + "ffn_gate_inp");
    copy(router, "a", x, p.hidden);
    Node& route = node(blk + "ffn_route", ops::route_topk_softmax,
                       RouteTopkSoftmaxParams{.batch = 1, .num_experts = p.experts, .top_k = p.top_k, .norm_topk_prob = true});
    copy(route, "logits", router.io.at("out"), p.experts);
    const MoeExperts gate_up{.kind = p.kind, .num_experts = p.experts, .n_rows = p.expert_ffn, .n_cols = p.hidden};
    Node& act = node(blk + "ffn_gate_up_exps", ops::gemv_quant_moe_id_gate_up_silu,
                     GemvQuantMoeIdGateUpSiluParams{.w = gate_up, .n_selected = p.top_k});
    weight(act, "gate_w", blk + "ffn_gate_exps");
    weight(act, "up_w", blk + "ffn_up_exps");
    copy(act, "a", x, p.hidden);
    copy(act, "ids", route.io.at("out_ids"), p.top_k);
    GemvQuantMoeIdParams dp{.w = {.kind = p.kind, .num_experts = p.experts, .n_rows = p.hidden, .n_cols = p.expert_ffn},
                            .n_selected = p.top_k, .src1_stride = p.expert_ffn};
    dp.a_len = p.top_k * p.expert_ffn;
    Node& down = node(blk + "ffn_down_exps", ops::gemv_quant_moe_id, dp);
    weight(down, "weights", blk + "ffn_down_exps");
    copy(down, "a", act.io.at("silu_out"), p.top_k * p.expert_ffn);
    copy(down, "ids", route.io.at("out_ids"), p.top_k);
    Node& sum = node(blk + "ffn_residual", ops::weighted_sum_residual_stacked,
                     WeightedSumStackedParams{.n_slots = p.top_k, .hidden = p.hidden});
    copy(sum, "slots", down.io.at("out"), p.top_k * p.hidden);
    copy(sum, "weights", route.io.at("out_weights"), p.top_k);
    copy(sum, "residual", h, p.hidden);
    return sum.io.at("residual");
  }

 private:
  const DecodeParams& p_;
  TensorMap& w_;
  DType dt_;
  bool moe_;
  Program g_;
};

}  // namespace

Program build_program(const std::string& name, const DecodeParams& p, TensorMap& weights) {
  check_params(name, p);
  return Builder(name, p, weights).build();
}

}  // namespace ts::graph
