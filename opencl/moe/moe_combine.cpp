// The moe family's combines: silu_mul_stacked / _batched (kernels/elementwise.cl's silu_mul) and the
// weighted sums (kernels/moe_combine.cl); the one with the next layer's RMS norm fused is the weighted
// sum into the residual, then rms_norm's own kernel on the residual as stored: exactly its chain.
#include "core/ops/moe_params.h"
#include "opencl/dense/norm_rows.h"
#include "opencl/plan.h"

namespace ts::ocl {
namespace {

constexpr size_t kGroup = 64;                  // 1-D elementwise work-groups
constexpr size_t kCols = 32, kRows = 4;        // weighted sums: 32 columns x 4 tokens

void silu_mul(Planner& pl, int64_t len) {
  pl.dispatch(pl.kernel("elementwise.cl", "silu_mul"), {size_t(len)}, {kGroup}, pl.buf("gate"), pl.buf("up"),
              pl.buf("out"), len);
}

// out (from element out_off) = (out +) the weighted sum of `batch` tokens' top_k slot rows.
void weighted_sum(Planner& pl, const char* out, bool add, int64_t batch, int64_t top_k, int64_t hidden,
                  int64_t w_off = 0, int64_t out_off = 0) {
  pl.dispatch(pl.kernel("moe_combine.cl", "weighted_sum", add ? "-DADD" : ""), {size_t(hidden), size_t(batch)},
              {kCols, kRows}, pl.buf("slots"), pl.buf("weights"), pl.buf(out), batch, top_k, hidden, w_off, out_off);
}

}  // namespace

void add_moe_combine_ops(PlanTable& t) {
  add_plan(t, ops::silu_mul_stacked, [](Planner& pl) {
    const auto& p = pl.params<SiluMulStackedParams>();
    silu_mul(pl, p.n_slots * p.ffn);
  });
  add_plan(t, ops::silu_mul_batched, [](Planner& pl) {
    const auto& p = pl.params<SiluMulBatchedParams>();
    silu_mul(pl, p.total_pairs * p.ffn);
  });
  add_plan(t, ops::weighted_sum_stacked, [](Planner& pl) {
    const auto& p = pl.params<WeightedSumStackedParams>();
    weighted_sum(pl, "out", false, 1, p.n_slots, p.hidden);
  });
  add_plan(t, ops::weighted_sum_residual_stacked, [](Planner& pl) {
    const auto& p = pl.params<WeightedSumStackedParams>();
    weighted_sum(pl, "residual", true, 1, p.n_slots, p.hidden);
  });
  add_plan(t, ops::weighted_sum_residual_norm_stacked, [](Planner& pl) {
    const auto& p = pl.params<WeightedSumResidualNormParams>();
    weighted_sum(pl, "residual", true, 1, p.n_slots, p.hidden);
    dispatch_rms_norm(pl, pl.buf("residual"), pl.buf("next_norm_w"), pl.buf("normed_out"), 1, p.hidden, p.eps);
  });
  add_plan(t, ops::weighted_sum_batched, [](Planner& pl) {
    const auto& p = pl.params<WeightedSumBatchedParams>();
    weighted_sum(pl, "out", false, p.batch, p.top_k, p.hidden);
  });
  add_plan(t, ops::weighted_sum_batched_offset, [](Planner& pl) {
    const auto& p = pl.params<WeightedSumBatchedOffsetParams>();
    weighted_sum(pl, "out", false, p.batch, p.top_k, p.hidden, p.weights_offset, p.out_offset);
  });
}

}  // namespace ts::ocl
