// argmax_rows: one work-group per row, a (value, index) tree reduction (kernels/argmax.cl).
#include "core/ops/core_params.h"
#include "plan.h"

namespace ts::ocl {

void add_argmax_ops(PlanTable& t) {
  t["argmax_rows"] = [](Planner& pl) {
    const auto& p = pl.params<ArgmaxRowsParams>();
    const size_t g = pl.reduction_group(p.n);
    pl.dispatch(pl.kernel("argmax.cl", "argmax_rows"), {size_t(p.m) * g}, {g}, pl.buf("logits"), pl.buf("ids"), p.n,
                LocalBytes{g * sizeof(float)}, LocalBytes{g * sizeof(cl_int)});
  };
}

}  // namespace ts::ocl
