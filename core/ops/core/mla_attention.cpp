// mla_attention: absorbed multi-head latent attention (DeepSeek V2/V3, FlashMLA form). Every head
// scores the shared latent rows c_j and rope keys: scale * (q[:r].c_j + q[r:].k_rope_j); out = sum p_j c_j.
#include <cmath>

#include "core/ops/core/attention_common.h"
#include "core/ops/core/attention_view.h"
#include "core/ops/core_params.h"

namespace ts {
using namespace describe;

const Op& op_mla_attention() {
  using P = MlaAttentionParams;
  using attn::inv_sqrt;
  const float s80 = inv_sqrt(80), s160 = inv_sqrt(160);
  const float s192 = inv_sqrt(192);  // DeepSeek-V3: qk_nope 128 + qk_rope 64
  static const TypedOp<P> op({
      .name = "mla_attention",
      .family = "core",
      .summary = "q [b,nh,q_len,r+dr], kv_compressed [b,kv_len,r], kv_rope [b,kv_len,dr] -> out [b,nh,q_len,r]",
      .tensors = [](const P& p) {
        const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
        return std::vector{in("q", {p.batch, p.num_heads, p.q_len, checked::add(r, dr, "kv_lora_rank + qk_rope_head_dim")}), in("kv_compressed", {p.batch, p.kv_len, r}),
                           in("kv_rope", {p.batch, p.kv_len, dr}), out("out", {p.batch, p.num_heads, p.q_len, r})};
      },
      .validate_params = [](const P& p) {
        positive(p.batch, "batch");
        positive(p.q_len, "q_len");
        positive(p.kv_len, "kv_len");
        positive(p.num_heads, "num_heads");
        positive(p.kv_lora_rank, "kv_lora_rank");
        positive(p.qk_rope_head_dim, "qk_rope_head_dim");
        non_negative(p.pos_offset, "pos_offset");
        (void)checked::add(p.pos_offset, p.q_len, "positions pos_offset + q_len");
      },
      .generate = [](const P&, TensorMap& t, Rng& r) {
        normal(t["q"], r);
        normal(t["kv_compressed"], r);
        normal(t["kv_rope"], r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        // A key is (c_j, k_rope_j): its norm at most the hypotenuse of the longest of each; a value is c_j.
        const double c = magnitude::max_row_norm(in, "kv_compressed", p.kv_lora_rank);
        const double rope = magnitude::max_row_norm(in, "kv_rope", p.qk_rope_head_dim);
        const attn::Magnitudes m{magnitude::max_row_norm(in, "q", p.kv_lora_rank + p.qk_rope_head_dim),
                                 std::hypot(c, rope), magnitude::max_abs(in, "kv_compressed"),
                                 "max row norm of q, hypot of those of kv_compressed and kv_rope, max|kv_compressed|"};
        return attn::softmax_tolerance(dt, p.kv_lora_rank + p.qk_rope_head_dim, p.scale, p.kv_len, m);
      },
      .cost = [](const P& p, DType dt) {
        const double pairs = attn::visible_pairs(p.q_len, p.pos_offset, p.kv_len, p.causal, 0);
        const double r = double(p.kv_lora_rank), dr = double(p.qk_rope_head_dim);
        const double q = double(p.batch * p.num_heads * p.q_len), kv = double(p.batch * p.kv_len);
        return Cost{2.0 * p.batch * p.num_heads * pairs * (2 * r + dr), bytes(dt, q * (2 * r + dr) + kv * (r + dr))};
      },
      // One latent "kv head" every query head shares: keys [kv_compressed | kv_rope], values kv_compressed
      // itself; no sliding window.
      .view = [](const P& p) {
        attn::DenseView v;
        v.seqs = p.batch, v.num_heads = p.num_heads, v.kv_heads = 1, v.q_len = p.q_len;
        attn::head_major_rows(v);
        const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
        v.k1 = {"kv_compressed", p.kv_len * r, 0, r}, v.k2 = {"kv_rope", p.kv_len * dr, 0, dr}, v.v = v.k1;
        v.dk1 = r, v.dk2 = dr, v.dv = r, v.scale = p.scale;
        v.causal = p.causal, v.pos_offset = p.pos_offset, v.kv_len = p.kv_len;
        return std::any(v);
      },
      .cases = {
          {"r64_rope16_decode", Tier::Smoke,
           {.kv_len = 40, .pos_offset = 39, .num_heads = 4, .causal = true, .scale = s80, .kv_lora_rank = 64,
            .qk_rope_head_dim = 16}},
          {"r128_rope32_prefill", Tier::Smoke,
           {.q_len = 24, .kv_len = 24, .num_heads = 2, .causal = true, .scale = s160, .kv_lora_rank = 128,
            .qk_rope_head_dim = 32}},
          // Chunked prefill: 8 new queries after 50 cached rows, two sequences.
          {"chunked_prefill_b2", Tier::Ci,
           {.batch = 2, .q_len = 8, .kv_len = 58, .pos_offset = 50, .num_heads = 3, .causal = true, .scale = s80,
            .kv_lora_rank = 64, .qk_rope_head_dim = 16}},
          // Queries at 10..13 over 40 keys: causality, not kv_len, ends each query's keys.
          {"causal_mid_chunk", Tier::Ci,
           {.q_len = 4, .kv_len = 40, .pos_offset = 10, .num_heads = 2, .causal = true, .scale = s80, .kv_lora_rank = 64,
            .qk_rope_head_dim = 16}},
          {"noncausal_r96_rope32", Tier::Ci,
           {.q_len = 5, .kv_len = 33, .num_heads = 2, .scale = 0.1f, .kv_lora_rank = 96, .qk_rope_head_dim = 32}},
          // scale 400 on N(0,1) dots of 80: logits of magnitude up to ~1e4; exp must not overflow.
          {"logits_1e4", Tier::Ci,
           {.q_len = 3, .kv_len = 48, .num_heads = 2, .scale = 400.0f, .kv_lora_rank = 64, .qk_rope_head_dim = 16}},
          // DeepSeek-V3 latent sizes (r 512, rope 64) on 16 heads.
          {"r512_rope64_h16_decode", Tier::Ci,
           {.kv_len = 100, .pos_offset = 99, .num_heads = 16, .causal = true, .scale = s192, .kv_lora_rank = 512,
            .qk_rope_head_dim = 64}},
          // Many heads over a long cache, in uneven pieces: backends cut a block this long over keys
          // (the cpu when few blocks of many rows would leave cores idle).
          {"h32_ctx2500_decode", Tier::Ci,
           {.kv_len = 2500, .pos_offset = 2499, .num_heads = 32, .causal = true, .scale = s80, .kv_lora_rank = 64,
            .qk_rope_head_dim = 16}},
          {"deepseek_v3_decode_ctx256", Tier::Full,
           {.kv_len = 256, .pos_offset = 255, .num_heads = 128, .causal = true, .scale = s192, .kv_lora_rank = 512,
            .qk_rope_head_dim = 64}},
      },
      .benches = {
          {"deepseek_v3_decode_h128_ctx4096", Tier::Full,
           {.kv_len = 4096, .pos_offset = 4095, .num_heads = 128, .causal = true, .scale = s192, .kv_lora_rank = 512,
            .qk_rope_head_dim = 64}},
      },
  });
  return op;
}

}  // namespace ts
