// flash_attention, mla_attention, flash_attention_batched_per_cache, gqa_attention on the attention engine
// (attention_engine.h): affine K/V rows, the score split into two key parts, a separate value width.
#include "core/ops/core_params.h"
#include "core/ops/tensor_params.h"
#include "opencl/attention/attention_engine.h"

#include <algorithm>
#include <cmath>

namespace ts::ocl {

void add_attention_ops(PlanTable& t) {
  add_plan(t, ops::flash_attention, [](Planner& pl) {
    const auto& p = pl.params<FlashAttentionParams>();
    const int64_t hd = p.head_dim, S = p.kv_rows();
    const Strides kv{p.num_kv_heads * S * hd, S * hd, hd};
    flash(pl, {.q = "q", .k1 = "k", .k2 = "k", .v = "v", .out = "out", .kv_lens = "", .batch = p.batch,
               .nh = p.num_heads, .nkv = p.num_kv_heads, .q_len = p.q_len, .kv_len = p.kv_len,
               .pos_offset = p.pos_offset, .causal = p.causal, .window = p.sliding_window, .scale = p.scale,
               .dk1 = hd, .dk2 = 0, .dv = hd, .s1 = kv, .s2 = kv, .sv = kv});
  });
  add_plan(t, ops::mla_attention, [](Planner& pl) {
    const auto& p = pl.params<MlaAttentionParams>();
    const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
    // One latent "kv head" shared by every query head: K = [compressed | rope], V = compressed.
    const Strides c{p.kv_len * r, 0, r}, kr{p.kv_len * dr, 0, dr};
    flash(pl, {.q = "q", .k1 = "kv_compressed", .k2 = "kv_rope", .v = "kv_compressed", .out = "out", .kv_lens = "",
               .batch = p.batch, .nh = p.num_heads, .nkv = 1, .q_len = p.q_len, .kv_len = p.kv_len,
               .pos_offset = p.pos_offset, .causal = p.causal, .window = 0, .scale = p.scale, .dk1 = r, .dk2 = dr,
               .dv = r, .s1 = c, .s2 = kr, .sv = c});
  });
  add_plan(t, ops::gqa_attention, [](Planner& pl) {
    const auto& p = pl.params<GqaAttentionParams>();
    const int64_t hd = p.head_dim, nh = p.num_heads;
    // Token-major K/V: row j of kv head h at j * num_kv_heads * hd + h * hd, read where it lies.
    const Strides kv{p.seq_kv * p.num_kv_heads * hd, hd, p.num_kv_heads * hd};
    // Token-major q / out: (position i, head h) is row i * nh + h, one batch entry of seq_q positions.
    flash(pl, {.q = "q", .k1 = "k", .k2 = "k", .v = "v", .out = "out", .kv_lens = "", .batch = 1, .nh = nh,
               .nkv = p.num_kv_heads, .q_len = p.seq_q, .kv_len = p.seq_kv, .pos_offset = p.pos_offset(),
               .causal = p.causal, .window = 0, .scale = float(1 / std::sqrt(double(hd))), .dk1 = hd, .dk2 = 0,
               .dv = hd, .s1 = kv, .s2 = kv, .sv = kv, .head_rows = 1, .pos_rows = nh});
  });
  add_plan(t, ops::flash_attention_batched_per_cache, [](Planner& pl) {
    const auto& p = pl.params<FlashAttentionBatchedPerCacheParams>();
    const int64_t m = pl.decl("q").shape.at(0);
    const Strides cache{0, p.capacity * p.hd, p.hd};
    // One dispatch per sequence: each has its own cache buffers and reads its length on the device.
    for (int64_t i = 0; i < m; ++i) {
      const std::string k = fmt::format("k_caches.{}", i), v = fmt::format("v_caches.{}", i);
      flash(pl, {.q = "q", .k1 = k, .k2 = k, .v = v, .out = "out", .kv_lens = "kv_lens", .kv_len_item = i,
                 .q_off = i * p.nq * p.hd, .out_off = i * p.nq * p.hd, .batch = 1, .nh = p.nq, .nkv = p.nkv,
                 .q_len = 1, .kv_len = p.capacity, .pos_offset = 0, .causal = false, .window = 0, .scale = p.scale,
                 .dk1 = p.hd, .dk2 = 0, .dv = p.hd, .s1 = cache, .s2 = cache, .sv = cache});
    }
  });
}

}  // namespace ts::ocl
