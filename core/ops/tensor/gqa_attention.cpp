// gqa_attention: token-major softmax attention, q [seq_q, num_heads, head_dim] over k, v [seq_kv,
// num_kv_heads, head_dim], scale 1/sqrt(head_dim), query head h reading kv head h / (num_heads /
// num_kv_heads). Causal: the queries are the last seq_q positions of the seq_kv keys, so query i sees
// keys j <= seq_kv - seq_q + i (decode is seq_q 1, prefill seq_q = seq_kv, chunked prefill between).
#include <cmath>

#include "core/ops/core/attention_common.h"
#include "core/ops/core/attention_view.h"
#include "core/ops/tensor_params.h"

namespace ts {
using namespace describe;

namespace {

GqaAttentionParams shape(int64_t seq_q, int64_t seq_kv, int64_t nh, int64_t nkv, int64_t hd, bool causal) {
  return {seq_q, seq_kv, nh, nkv, hd, causal};
}

}  // namespace

const Op& op_gqa_attention() {
  using P = GqaAttentionParams;
  static const TypedOp<P> op({
      .name = "gqa_attention",
      .family = "tensor",
      .summary = "q [seq_q,nh,hd], k, v [seq_kv,nkv,hd] -> out [seq_q,nh,hd]: GQA softmax attention, scale 1/sqrt(hd)",
      .tensors = [](const P& p) {
        const Shape kv = {p.seq_kv, p.num_kv_heads, p.head_dim};
        return std::vector{in("q", {p.seq_q, p.num_heads, p.head_dim}), in("k", kv), in("v", kv),
                           out("out", {p.seq_q, p.num_heads, p.head_dim})};
      },
      .validate_params = [](const P& p) {
        positive(p.seq_q, "seq_q");
        positive(p.seq_kv, "seq_kv");
        positive(p.head_dim, "head_dim");
        attn::check_gqa(p.num_heads, p.num_kv_heads, "num_heads", "num_kv_heads");
        // Causal aligns the queries to the end of the keys: more queries than keys leaves the first
        // ones before key 0, which the trait does not define.
        check(!p.causal || p.seq_q <= p.seq_kv,
              "parameter 'seq_q' = {} must not exceed seq_kv = {} when causal (queries are the last seq_q positions)",
              p.seq_q, p.seq_kv);
        (void)checked::mul(checked::mul(p.seq_kv, p.num_heads, "seq_kv * num_heads"), p.head_dim, "kv elements");
        (void)checked::mul(checked::mul(p.seq_q, p.num_heads, "seq_q * num_heads"), p.head_dim, "q elements");
      },
      .generate = [](const P&, TensorMap& t, Rng& r) {
        normal(t["q"], r);
        normal(t["k"], r);
        normal(t["v"], r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        return attn::softmax_tolerance(dt, p.head_dim, attn::inv_sqrt(double(p.head_dim)), p.seq_kv,
                                       attn::row_magnitudes(in, "q", "k", "v", p.head_dim));
      },
      .cost = [](const P& p, DType dt) {
        const double pairs = attn::visible_pairs(p.seq_q, p.pos_offset(), p.seq_kv, p.causal, 0);
        const double q = double(p.seq_q * p.num_heads * p.head_dim);
        const double kv = double(p.seq_kv * p.num_kv_heads * p.head_dim);
        return Cost{4.0 * p.num_heads * pairs * p.head_dim, bytes(dt, 2 * q + 2 * kv)};
      },
      // Token-major q / out and K/V: kv head h's row j at (j nkv + h) hd, read where it lies.
      .view = [](const P& p) {
        attn::DenseView v;
        v.seqs = 1, v.num_heads = p.num_heads, v.kv_heads = p.num_kv_heads, v.q_len = p.seq_q;
        attn::token_major_rows(v);
        const int64_t hd = p.head_dim, row = p.num_kv_heads * hd;
        v.k1 = {"k", p.seq_kv * row, hd, row}, v.v = {"v", p.seq_kv * row, hd, row};
        v.dk1 = v.dv = hd, v.scale = 1 / std::sqrt(double(hd));
        v.causal = p.causal, v.pos_offset = p.pos_offset(), v.kv_len = p.seq_kv;
        return std::any(v);
      },
      .cases = {
          {"one_token_mha_hd64", Tier::Smoke, shape(1, 1, 2, 2, 64, true)},
          {"decode_gqa8_hd128", Tier::Smoke, shape(1, 37, 8, 1, 128, true)},
          {"prefill_mha_hd64", Tier::Ci, shape(17, 17, 4, 4, 64, true)},
          {"prefill_gqa8_hd80", Tier::Ci, shape(19, 19, 16, 2, 80, true)},
          // Chunked prefill: 5 new queries at the end of 33 keys.
          {"chunked_gqa4_hd128", Tier::Ci, shape(5, 33, 8, 2, 128, true)},
          {"chunked_mha_hd80", Tier::Ci, shape(7, 50, 3, 3, 80, true)},
          {"noncausal_gqa8_hd64", Tier::Ci, shape(9, 41, 8, 1, 64, false)},
          // Without causality more queries than keys is well defined: every query sees every key.
          {"noncausal_more_queries_hd80", Tier::Ci, shape(11, 3, 2, 1, 80, false)},
          {"decode_mha_hd80_odd", Tier::Ci, shape(1, 129, 5, 5, 80, true)},
          {"llama3_8b_prefill128", Tier::Full, shape(128, 128, 32, 8, 128, true)},
      },
      .benches = {
          {"llama3_8b_prefill512_causal", Tier::Full, shape(512, 512, 32, 8, 128, true)},
          {"llama3_8b_decode_ctx4096", Tier::Full, shape(1, 4096, 32, 8, 128, true)},
      },
  });
  return op;
}

}  // namespace ts
