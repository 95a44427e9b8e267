// argmax_rows: one work-group per row, a (value, index) tree reduction (kernels/argmax.cl).
#include "core/ops/core_params.h"
#include "opencl/plan.h"

namespace ts::ocl {

void add_argmax_ops(PlanTable& t) {
  add_plan(t, ops::argmax_rows, [](Planner& pl) {
    const auto& p = pl.params<ArgmaxRowsParams>();
    // GPUs: a power-of-two group, scalar loads; CPU drivers: one work-item with 16-wide vectors.
    const bool cpu = pl.limits().cpu;
    const size_t g = cpu ? 1 : pl.reduction_group(p.n);
    pl.dispatch(pl.kernel("argmax.cl", "argmax_rows", cpu ? "-DVW=16" : "-DVW=1"), {size_t(p.m) * g}, {g}, pl.buf("logits"), pl.buf("ids"), p.n,
                LocalBytes{g * sizeof(float)}, LocalBytes{g * sizeof(cl_int)});
  });
}

}  // namespace ts::ocl
