// flash_attention: softmax attention of a chunk of q_len queries at pos_offset over kv_len cached rows
// (row stride kv_seq_stride), GQA, causal and sliding-window masking.
#include <algorithm>
#include <cmath>

#include "core/ops/core/attention_common.h"
#include "core/ops/core/attention_view.h"
#include "core/ops/core_params.h"

namespace ts {
using namespace describe;

const Op& op_flash_attention() {
  using P = FlashAttentionParams;
  using attn::inv_sqrt;
  const float s64 = inv_sqrt(64), s80 = inv_sqrt(80), s96 = inv_sqrt(96), s128 = inv_sqrt(128), s256 = inv_sqrt(256);
  static const TypedOp<P> op({
      .name = "flash_attention",
      .family = "core",
      .summary = "q [b,nh,q_len,hd], k, v [b,nkv,S,hd] -> out [b,nh,q_len,hd]: causal / windowed GQA attention",
      .tensors = [](const P& p) {
        const Shape kv = {p.batch, p.num_kv_heads, p.kv_rows(), p.head_dim};
        return std::vector{in("q", {p.batch, p.num_heads, p.q_len, p.head_dim}), in("k", kv), in("v", kv),
                           out("out", {p.batch, p.num_heads, p.q_len, p.head_dim})};
      },
      .validate_params = [](const P& p) {
        positive(p.batch, "batch");
        positive(p.q_len, "q_len");
        positive(p.kv_len, "kv_len");
        positive(p.head_dim, "head_dim");
        non_negative(p.pos_offset, "pos_offset");
        (void)checked::add(p.pos_offset, p.q_len, "positions pos_offset + q_len");
        non_negative(p.sliding_window, "sliding_window");
        attn::check_gqa(p.num_heads, p.num_kv_heads, "num_heads", "num_kv_heads");
        check(p.kv_seq_stride == 0 || p.kv_seq_stride >= p.kv_len,
              "kv_seq_stride {} is below kv_len {} (0 means kv_len)", p.kv_seq_stride, p.kv_len);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["q"], r);
        attn::normal_rows_then_nan(t["k"], r, p.batch * p.num_kv_heads, p.kv_rows(), p.kv_len, p.head_dim);
        attn::normal_rows_then_nan(t["v"], r, p.batch * p.num_kv_heads, p.kv_rows(), p.kv_len, p.head_dim);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        const int64_t keys = p.sliding_window > 0 ? std::min(p.kv_len, p.sliding_window) : p.kv_len;
        return attn::softmax_tolerance(dt, p.head_dim, p.scale, keys, attn::row_magnitudes(in, "q", "k", "v", p.head_dim));
      },
      .cost = [](const P& p, DType dt) {
        const double pairs = attn::visible_pairs(p.q_len, p.pos_offset, p.kv_len, p.causal, p.sliding_window);
        const double q = double(p.batch * p.num_heads * p.q_len * p.head_dim);
        const double kv = double(p.batch * p.num_kv_heads * p.kv_len * p.head_dim);
        return Cost{4.0 * p.batch * p.num_heads * pairs * p.head_dim, bytes(dt, 2 * q + 2 * kv)};
      },
      // Head-major q / out; kv head h of batch entry b: S = kv_rows() rows of head_dim from (b nkv + h) S hd.
      .view = [](const P& p) {
        attn::DenseView v;
        v.seqs = p.batch, v.num_heads = p.num_heads, v.kv_heads = p.num_kv_heads, v.q_len = p.q_len;
        attn::head_major_rows(v);
        const int64_t hd = p.head_dim, S = p.kv_rows();
        v.k1 = {"k", p.num_kv_heads * S * hd, S * hd, hd}, v.v = {"v", p.num_kv_heads * S * hd, S * hd, hd};
        v.dk1 = v.dv = hd, v.scale = p.scale;
        v.causal = p.causal, v.window = p.sliding_window, v.pos_offset = p.pos_offset, v.kv_len = p.kv_len;
        return std::any(v);
      },
      .cases = {
          {"decode_hd64", Tier::Smoke,
           {.kv_len = 37, .pos_offset = 36, .num_heads = 2, .num_kv_heads = 2, .head_dim = 64, .causal = true, .scale = s64}},
          {"prefill_gqa4_hd128", Tier::Smoke,
           {.q_len = 19, .kv_len = 19, .num_heads = 8, .num_kv_heads = 2, .head_dim = 128, .causal = true, .scale = s128}},
          {"noncausal_b2_hd80", Tier::Ci,
           {.batch = 2, .q_len = 7, .kv_len = 50, .num_heads = 2, .num_kv_heads = 2, .head_dim = 80, .scale = s80}},
          // Chunked prefill: 16 new queries after 100 cached rows.
          {"chunked_prefill_gqa8_hd96", Tier::Ci,
           {.q_len = 16, .kv_len = 116, .pos_offset = 100, .num_heads = 16, .num_kv_heads = 2, .head_dim = 96,
            .causal = true, .scale = s96}},
          // Every query head shares the one kv head (MQA).
          {"mqa_hd256", Tier::Ci,
           {.q_len = 2, .kv_len = 70, .pos_offset = 68, .num_heads = 6, .num_kv_heads = 1, .head_dim = 256,
            .causal = true, .scale = s256}},
          {"window16_of_200", Tier::Ci,
           {.q_len = 24, .kv_len = 200, .pos_offset = 176, .num_heads = 4, .num_kv_heads = 2, .head_dim = 64,
            .causal = true, .scale = s64, .sliding_window = 16}},
          {"window1000_of_150", Tier::Ci,
           {.q_len = 5, .kv_len = 150, .pos_offset = 145, .num_heads = 4, .num_kv_heads = 1, .head_dim = 128,
            .causal = true, .scale = s128, .sliding_window = 1000}},
          {"window8_noncausal", Tier::Ci,
           {.q_len = 5, .kv_len = 40, .pos_offset = 20, .num_heads = 2, .num_kv_heads = 1, .head_dim = 64,
            .scale = s64, .sliding_window = 8}},
          // Queries at 20..23 over 60 keys: causality, not kv_len, ends each query's keys.
          {"causal_mid_chunk_hd80", Tier::Ci,
           {.q_len = 4, .kv_len = 60, .pos_offset = 20, .num_heads = 4, .num_kv_heads = 2, .head_dim = 80,
            .causal = true, .scale = s80}},
          // Rows 61..95 of each kv head are NaN padding the kernel must skip.
          {"kv_stride96_len61_b2", Tier::Ci,
           {.batch = 2, .q_len = 3, .kv_len = 61, .pos_offset = 58, .num_heads = 4, .num_kv_heads = 2, .head_dim = 64,
            .causal = true, .scale = s64, .kv_seq_stride = 96}},
          // Queries at 34 and 35 see nothing (window 4 starts at or past kv_len 32): zeros.
          {"no_visible_key", Tier::Ci,
           {.q_len = 6, .kv_len = 32, .pos_offset = 30, .num_heads = 2, .num_kv_heads = 1, .head_dim = 64,
            .causal = true, .scale = s64, .sliding_window = 4}},
          // scale 400 on N(0,1) q, k of 64: logits of magnitude up to ~1e4; exp must not overflow.
          {"logits_1e4", Tier::Ci,
           {.q_len = 4, .kv_len = 64, .num_heads = 2, .num_kv_heads = 1, .head_dim = 64, .scale = 400.0f}},
          {"llama3_8b_prefill256", Tier::Full,
           {.q_len = 256, .kv_len = 256, .num_heads = 32, .num_kv_heads = 8, .head_dim = 128, .causal = true, .scale = s128}},
          // Qwen3-30B-A3B: 32 query heads on 4 kv heads of 128.
          {"qwen3_30b_a3b_decode_ctx1000", Tier::Full,
           {.kv_len = 1000, .pos_offset = 999, .num_heads = 32, .num_kv_heads = 4, .head_dim = 128, .causal = true,
            .scale = s128}},
      },
      .benches = {
          {"decode_h32_kv8_hd128_ctx4096", Tier::Full,
           {.kv_len = 4096, .pos_offset = 4095, .num_heads = 32, .num_kv_heads = 8, .head_dim = 128, .causal = true,
            .scale = s128}},
          {"prefill_h32_kv8_hd128_len512", Tier::Full,
           {.q_len = 512, .kv_len = 512, .num_heads = 32, .num_kv_heads = 8, .head_dim = 128, .causal = true,
            .scale = s128}},
      },
  });
  return op;
}

}  // namespace ts
