// rms_norm, fused_add_rms_norm, layer_norm: one work-group per row (kernels/norms.cl).
#include "core/ops/core_params.h"
#include "opencl/dense/norm_rows.h"
#include "opencl/plan.h"

namespace ts::ocl {
namespace {

// One row per group. GPUs: a power-of-two group (the tree reduction) no larger than the row, scalar
// loads; CPU drivers: one work-item running 16-wide vectors.
struct RowShape {
  size_t group;
  std::string defines;
};
RowShape row_shape(const Planner& pl, int64_t dim) {
  if (pl.limits().cpu) return {1, "-DVW=16"};
  return {pl.reduction_group(dim), "-DVW=1"};
}

}  // namespace

void dispatch_rms_norm(Planner& pl, cl_mem x, cl_mem w, cl_mem out, int64_t rows, int64_t dim, float eps) {
  const RowShape r = row_shape(pl, dim);
  const size_t g = r.group;
  pl.dispatch(pl.kernel("norms.cl", "rms_norm", r.defines), {size_t(rows) * g}, {g}, x, w, out, dim, eps,
              LocalBytes{g * sizeof(float)});
}

void add_norm_ops(PlanTable& t) {
  add_plan(t, ops::rms_norm, [](Planner& pl) {
    const auto& p = pl.params<RmsNormParams>();
    dispatch_rms_norm(pl, pl.buf("x"), pl.buf("w"), pl.buf("out"), p.tokens, p.dim, p.eps);
  });
  add_plan(t, ops::fused_add_rms_norm, [](Planner& pl) {
    const auto& p = pl.params<FusedAddRmsNormParams>();
    const RowShape r = row_shape(pl, p.dim);
    const size_t g = r.group;
    pl.dispatch(pl.kernel("norms.cl", "fused_add_rms_norm", r.defines), {size_t(p.tokens) * g}, {g}, pl.buf("residual"),
                pl.buf("x"), pl.buf("w"), pl.buf("out"), p.dim, p.eps, LocalBytes{g * sizeof(float)});
  });
  add_plan(t, ops::layer_norm, [](Planner& pl) {
    const auto& p = pl.params<LayerNormParams>();
    const RowShape r = row_shape(pl, p.dim);
    const size_t g = r.group;
    pl.dispatch(pl.kernel("norms.cl", "layer_norm", r.defines), {size_t(p.tokens) * g}, {g}, pl.buf("x"), pl.buf("gamma"),
                pl.buf("beta"), pl.buf("out"), p.dim, p.eps, LocalBytes{g * sizeof(float)});
  });
}

}  // namespace ts::ocl
