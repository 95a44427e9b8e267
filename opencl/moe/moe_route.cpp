// The moe family's routing on the device (kernels/moe_route.cl): route_topk_softmax, compute_ids_tpe and
// moe_align_block_size. Their outputs stay in device buffers for the expert GEMV / GEMM that follow;
// nothing here reads routing data on the host.
#include "core/ops/moe_params.h"
#include "opencl/plan.h"

namespace ts::ocl {
namespace {

// One work-group per row (token) or per expert: GPUs a power-of-two group no larger than the loop it
// shares (up to 64), CPU drivers one work-item walking it.
size_t group(const Planner& pl, int64_t n) { return pl.limits().cpu ? 1 : pl.reduction_group(n, 64); }

std::string wg_define(size_t g) { return fmt::format("-DWG={}", g); }

void plan_route(Planner& pl) {
  const auto& p = pl.params<RouteTopkSoftmaxParams>();
  const size_t g = group(pl, p.num_experts);
  pl.dispatch(pl.kernel("moe_route.cl", "route_topk_softmax", wg_define(g)), {size_t(p.batch) * g}, {g},
              pl.buf("logits"), pl.buf("out_ids"), pl.buf("out_weights"), p.num_experts, p.top_k,
              int{p.norm_topk_prob});
}

void plan_ids_tpe(Planner& pl) {
  const auto& p = pl.params<ComputeIdsTpeParams>();
  const int64_t pairs = p.batch * p.top_k;
  const size_t g = group(pl, pairs);
  pl.dispatch(pl.kernel("moe_route.cl", "moe_ids_tpe", wg_define(g)), {size_t(p.num_experts) * g}, {g},
              pl.buf("selected_ids"), pl.buf("tpe"), pl.buf("ids"), pairs);
}

// Two passes: the counts (a device scratch buffer), then each expert's placement from them.
void plan_align(Planner& pl) {
  const auto& p = pl.params<MoeAlignBlockSizeParams>();
  const int64_t pairs = p.batch * p.top_k;
  const size_t g = group(pl, pairs), experts = static_cast<size_t>(p.num_experts);
  cl_mem counts = pl.scratch(experts * sizeof(int32_t));
  pl.dispatch(pl.kernel("moe_route.cl", "moe_count", wg_define(g)), {experts * g}, {g}, pl.buf("topk_ids"), counts,
              pairs);
  pl.dispatch(pl.kernel("moe_route.cl", "moe_align", wg_define(g)), {experts * g}, {g}, pl.buf("topk_ids"), counts,
              pl.buf("sorted_token_ids"), pl.buf("expert_ids"), pl.buf("num_tokens_post_padded"), pairs,
              p.num_experts, p.block_size);
}

}  // namespace

void add_moe_route_ops(PlanTable& t) {
  add_plan(t, ops::route_topk_softmax, plan_route);
  add_plan(t, ops::compute_ids_tpe, plan_ids_tpe);
  add_plan(t, ops::moe_align_block_size, plan_align);
}

}  // namespace ts::ocl
