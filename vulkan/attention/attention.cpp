// flash_attention, mla_attention, flash_attention_batched_per_cache, gqa_attention on the attention engine
// (vulkan/attention/attention_engine.h).
#include <cmath>
#include <string>
#include <vector>

#include "core/ops/core_params.h"
#include "core/ops/tensor_params.h"
#include "vulkan/attention/attention_engine.h"
#include "vulkan/dense/layout.h"

namespace ts::vk {

// gqa_attention: token-major q [seq_q, nh, hd] and k, v [seq_kv, nkv, hd]. attention.comp reads
// affine K/V rows hd apart within a head, and q / out rows head-major, so this plan copies q, k and v
// into head-major scratch buffers (layout.comp), attends there and copies the output back: two extra
// passes over the tensors. A row-stride push constant in attention.comp would remove the copies.
std::vector<Dispatch> gqa(const Target& tg, const GqaAttentionParams& p) {
  const int64_t hd = p.head_dim, nh = p.num_heads, nkv = p.num_kv_heads;
  const uint64_t es = dtype_size(tg.dtype);
  const uint64_t q_bytes = es * uint64_t(p.seq_q * nh * hd), kv_bytes = es * uint64_t(p.seq_kv * nkv * hd);
  const std::string sq = "gqa.q", sk = "gqa.k", sv = "gqa.v", so = "gqa.out";
  auto scratch = [&](const std::string& name) {
    return Binding::scratch_buffer(name, name == sk || name == sv ? kv_bytes : q_bytes);
  };
  // [tokens, heads, hd] -> [heads, tokens, hd], and back.
  auto to_head = [&](int64_t tokens, int64_t heads) {
    return Copy3d{.n0 = heads, .n1 = tokens, .n2 = hd, .ss0 = hd, .ss1 = heads * hd, .ds0 = tokens * hd, .ds1 = hd};
  };
  std::vector<Dispatch> out{layout_copy(tg, "q", scratch(sq), to_head(p.seq_q, nh)),
                            layout_copy(tg, "k", scratch(sk), to_head(p.seq_kv, nkv)),
                            layout_copy(tg, "v", scratch(sv), to_head(p.seq_kv, nkv))};
  const int64_t hs = p.seq_kv * hd;
  for (Dispatch& d : attn(tg,
                          {.q = sq, .k1 = sk, .k2 = sk, .v = sv, .out = so, .batch = 1, .q_len = p.seq_q,
                           .kv_len = p.seq_kv, .pos_offset = p.pos_offset(), .nh = nh, .nkv = nkv, .dqk = hd,
                           .dk1 = hd, .dv = hd, .causal = p.causal, .k1_hs = hs, .k2_hs = hs, .v_hs = hs,
                           .scale = float(1 / std::sqrt(double(hd)))},
                          false)) {
    for (Binding& b : d.bindings)  // the engine names its buffers; these four are scratch
      if (!b.scratch && (b.tensor == sq || b.tensor == sk || b.tensor == sv || b.tensor == so)) b = scratch(b.tensor);
    out.push_back(std::move(d));
  }
  out.push_back(layout_copy(tg, scratch(so), "out",
                            {.n0 = nh, .n1 = p.seq_q, .n2 = hd, .ss0 = p.seq_q * hd, .ss1 = hd, .ds0 = hd,
                             .ds1 = nh * hd}));
  return out;
}

void add_attention_planners(PlannerTable& t) {
  add_planner(t, ops::gqa_attention, [](const GqaAttentionParams& p, const Decls&, const Target& tg) {
    return gqa(tg, p);
  });
  add_planner(
      t, ops::flash_attention, [](const FlashAttentionParams& p, const Decls&, const Target& tg) {
        const int64_t hs = p.kv_rows() * p.head_dim;
        return attn(tg,
                    {.q = "q", .k1 = "k", .k2 = "k", .v = "v", .batch = p.batch, .q_len = p.q_len,
                     .kv_len = p.kv_len, .pos_offset = p.pos_offset, .nh = p.num_heads,
                     .nkv = p.num_kv_heads, .dqk = p.head_dim, .dk1 = p.head_dim, .dv = p.head_dim,
                     .causal = p.causal, .window = p.sliding_window, .k1_hs = hs, .k2_hs = hs, .v_hs = hs,
                     .scale = p.scale},
                    false);
      });
  add_planner(
      t, ops::mla_attention, [](const MlaAttentionParams& p, const Decls&, const Target& tg) {
        // Every head reads the one latent cache: a single "kv head" whose group is all heads.
        const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
        return attn(tg,
                    {.q = "q", .k1 = "kv_compressed", .k2 = "kv_rope", .v = "kv_compressed",
                     .batch = p.batch, .q_len = p.q_len, .kv_len = p.kv_len, .pos_offset = p.pos_offset,
                     .nh = p.num_heads, .nkv = 1, .dqk = r + dr, .dk1 = r, .dv = r, .causal = p.causal,
                     .k1_hs = p.kv_len * r, .k2_hs = p.kv_len * dr, .v_hs = p.kv_len * r,
                     .scale = p.scale},
                    true);
      });
  add_planner(
      t, ops::flash_attention_batched_per_cache,
      [](const FlashAttentionBatchedPerCacheParams& p, const Decls& decls, const Target& tg) {
        // One attention (and combine) per sequence over its own caches; its length is read from kv_lens on
        // the device, so its pieces cover the capacity.
        const int64_t m = decls.at("q").shape.at(0), hs = p.capacity * p.hd;
        std::vector<Dispatch> out;
        for (int64_t i = 0; i < m; ++i) {
          const std::string k = "k_caches." + std::to_string(i), v = "v_caches." + std::to_string(i);
          const auto d = attn(tg,
                              {.q = "q", .k1 = k, .k2 = k, .v = v, .kv_lens = "kv_lens", .nh = p.nq, .nkv = p.nkv,
                               .dqk = p.hd, .dk1 = p.hd, .dv = p.hd, .k1_hs = hs, .k2_hs = hs, .v_hs = hs,
                               .scale = p.scale, .q_off = i * p.nq * p.hd, .o_off = i * p.nq * p.hd,
                               .kv_len_index = static_cast<uint32_t>(i), .capacity = p.capacity},
                              false);
          out.insert(out.end(), d.begin(), d.end());
        }
        return out;
      });
}

}  // namespace ts::vk
