// rms_norm, fused_add_rms_norm, layer_norm: one work-group per row (kernels/norms.cl).
#include "core/ops/core_params.h"
#include "plan.h"

namespace ts::ocl {
void add_norm_ops(PlanTable& t) {
  t["rms_norm"] = [](Planner& pl) {
    const auto& p = pl.params<RmsNormParams>();
    const size_t g = pl.reduction_group(p.dim);
    pl.dispatch(pl.kernel("norms.cl", "rms_norm"), {size_t(p.tokens) * g}, {g}, pl.buf("x"), pl.buf("w"),
                pl.buf("out"), p.dim, p.eps, LocalBytes{g * sizeof(float)});
  };
  t["fused_add_rms_norm"] = [](Planner& pl) {
    const auto& p = pl.params<FusedAddRmsNormParams>();
    const size_t g = pl.reduction_group(p.dim);
    pl.dispatch(pl.kernel("norms.cl", "fused_add_rms_norm"), {size_t(p.tokens) * g}, {g}, pl.buf("residual"),
                pl.buf("x"), pl.buf("w"), pl.buf("out"), p.dim, p.eps, LocalBytes{g * sizeof(float)});
  };
  t["layer_norm"] = [](Planner& pl) {
    const auto& p = pl.params<LayerNormParams>();
    const size_t g = pl.reduction_group(p.dim);
    pl.dispatch(pl.kernel("norms.cl", "layer_norm"), {size_t(p.tokens) * g}, {g}, pl.buf("x"), pl.buf("gamma"),
                pl.buf("beta"), pl.buf("out"), p.dim, p.eps, LocalBytes{g * sizeof(float)});
  };
}

}  // namespace ts::ocl
