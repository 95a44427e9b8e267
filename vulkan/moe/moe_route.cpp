// The moe family's routing on the device: route_topk_softmax (moe_route.comp), the bucket sort of
// compute_ids_tpe and moe_align_block_size (moe_bucket.comp: the alignment is a count pass and a
// placement pass, the counts kept in a scratch buffer, so nothing goes back to the host). The expert
// GEMV / GEMM are vulkan/moe/moe_experts.cpp, the combines vulkan/moe/moe_combine.cpp.
#include "core/ops/moe_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
enum BucketMode : uint32_t { kIdsTpe = 0, kAlignCount = 1, kAlignPlace = 2 };  // moe_bucket.comp: MODE

Dispatch bucket(const Target& tg, BucketMode mode, std::vector<Binding> bindings, int64_t n, int64_t experts,
                int64_t block_size) {
  Dispatch d;
  d.shader = tg.variant(Kernel::moe_bucket);
  d.bindings = std::move(bindings);
  d.push = Push().u(n).u(experts).u(block_size).words();
  d.spec = {mode};
  d.groups = {groups_for(experts, 1, std::min(tg.group_cap, tg.max_groups[0])), 1, 1};
  return d;
}
}  // namespace

void add_moe_route_planners(PlannerTable& t) {
  add_planner(t, ops::route_topk_softmax, [](const RouteTopkSoftmaxParams& p, const Decls&, const Target& tg) {
    Dispatch d;
    d.shader = tg.variant(Kernel::moe_route);
    d.bindings = {"logits", "out_ids", "out_weights"};
    d.push = Push().u(p.batch).u(p.num_experts).u(p.top_k).u(p.norm_topk_prob ? 1 : 0).words();
    d.groups = {groups_for(p.batch, 1, std::min(tg.group_cap, tg.max_groups[0])), 1, 1};
    return std::vector{d};
  });
  add_planner(t, ops::compute_ids_tpe, [](const ComputeIdsTpeParams& p, const Decls&, const Target& tg) {
    // Bindings 3 and 4 (the alignment's outputs) are unused in this mode: bound to tpe.
    return std::vector{bucket(tg, kIdsTpe, {"selected_ids", "tpe", "ids", "tpe", "tpe"}, p.batch * p.top_k,
                              p.num_experts, 1)};
  });
  add_planner(t, ops::moe_align_block_size, [](const MoeAlignBlockSizeParams& p, const Decls&, const Target& tg) {
    const Binding counts = Binding::scratch_buffer("moe_counts", 4 * static_cast<uint64_t>(p.num_experts));
    const int64_t n = p.batch * p.top_k;
    return std::vector{
        bucket(tg, kAlignCount, {"topk_ids", counts, "sorted_token_ids", "expert_ids", "num_tokens_post_padded"}, n,
               p.num_experts, p.block_size),
        bucket(tg, kAlignPlace, {"topk_ids", counts, "sorted_token_ids", "expert_ids", "num_tokens_post_padded"}, n,
               p.num_experts, p.block_size)};
  });
}

}  // namespace ts::vk
