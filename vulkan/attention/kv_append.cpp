// kv_append_paged: shaders/kv_append.comp, one dispatch for both pools.
#include "core/ops/paged_params.h"
#include "vulkan/attention/attention_engine.h"
#include "vulkan/shaders/kv_append_push.glsl"

namespace ts::vk {

void add_kv_planners(PlannerTable& t) {
  add_planner(
      t, ops::kv_append_paged,
      [](const KvAppendPagedParams& p, const Decls&, const Target& tg) {
        const bool scaled = has_scales(p.kv_dtype);
        Dispatch d;
        d.shader = tg.variant(Kernel::kv_append);
        d.bindings = {"k_in", "v_in", "layer_k", "layer_v", scaled ? "layer_k_scales" : "k_in",
                      scaled ? "layer_v_scales" : "k_in", "paged_block_indices"};
        const int64_t rows = p.tokens * p.num_kv_heads;
        KvAppendPushIn pc;
        pc.rows = rows, pc.nkv = p.num_kv_heads, pc.hd = p.head_dim, pc.block_size = p.block_size;
        pc.cache_len_before = p.cache_len_before, pc.kv_kind = static_cast<uint32_t>(p.kv_dtype);
        d.push = push_words(pc);
        d.groups = {groups_for(2 * rows, 1, tg.group_cap), 1, 1};
        return std::vector{d};
      },
      [](const Problem& pr) {
        const auto& p = pr.params.as<KvAppendPagedParams>();
        // Each row is written as whole 32-bit words, so rows never share one.
        if (p.head_dim % 4) return Support::no(fmt::format("head_dim {} is not a multiple of 4", p.head_dim));
        return Support::yes();
      });
}

}  // namespace ts::vk
