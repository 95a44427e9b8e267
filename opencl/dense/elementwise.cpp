// silu, add and mul (b broadcast), gelu, the in-place adds, add_bias and the SiLU-gated splits
// (kernels/elementwise.cl).
#include "core/ops/core_params.h"
#include "core/ops/tensor/broadcast.h"
#include "core/ops/tensor_params.h"
#include "opencl/plan.h"

namespace ts::ocl {
namespace {

constexpr size_t kGroup = 64;  // 1-D elementwise work-groups
constexpr size_t kRowGroup = 32;  // 2-D ones: 32 columns x 4 rows

// add / mul: out's d0 * d1 rows of d2, b indexed by core/ops/tensor/broadcast.h's strides.
void plan_broadcast(Planner& pl, bool mul) {
  const auto& p = pl.params<BroadcastParams>();
  const bcast::Strides s = bcast::strides(p);
  pl.dispatch(pl.kernel("elementwise.cl", "broadcast_binary", mul ? "-DBIN_MUL" : ""),
              {size_t(p.d2), size_t(p.d0 * p.d1)}, {kRowGroup, 4}, pl.buf("a"), pl.buf("b"), pl.buf("out"),
              p.d0 * p.d1, p.d1, p.d2, s.s0, s.s1, s.s2);
}

}  // namespace

void add_elementwise_ops(PlanTable& t) {
  add_plan(t, ops::silu, [](Planner& pl) {
    const auto& p = pl.params<SiluParams>();
    pl.dispatch(pl.kernel("elementwise.cl", "silu_out"), {size_t(p.len)}, {kGroup}, pl.buf("x"), pl.buf("out"), p.len);
  });
  add_plan(t, ops::add, [](Planner& pl) { plan_broadcast(pl, false); });
  add_plan(t, ops::mul, [](Planner& pl) { plan_broadcast(pl, true); });
  add_plan(t, ops::gelu, [](Planner& pl) {
    const auto& p = pl.params<GeluParams>();
    pl.dispatch(pl.kernel("elementwise.cl", "gelu"), {size_t(p.len)}, {kGroup}, pl.buf("x"), pl.buf("out"), p.len);
  });
  add_plan(t, ops::add_inplace, [](Planner& pl) {
    const auto& p = pl.params<AddInplaceParams>();
    pl.dispatch(pl.kernel("elementwise.cl", "add_inplace"), {size_t(p.len)}, {kGroup}, pl.buf("residual"),
                pl.buf("x"), p.len);
  });
  add_plan(t, ops::scaled_add_inplace, [](Planner& pl) {
    const auto& p = pl.params<ScaledAddInplaceParams>();
    pl.dispatch(pl.kernel("elementwise.cl", "scaled_add_inplace"), {size_t(p.len)}, {kGroup}, pl.buf("dst"),
                pl.buf("src"), p.len, p.scale);
  });
  add_plan(t, ops::add_bias, [](Planner& pl) {
    const auto& p = pl.params<AddBiasParams>();
    pl.dispatch(pl.kernel("elementwise.cl", "add_bias"), {size_t(p.cols), size_t(p.rows)}, {kRowGroup, 4},
                pl.buf("data"), pl.buf("bias"), p.rows, p.cols);
  });
  add_plan(t, ops::fused_silu_mul_split, [](Planner& pl) {
    const auto& p = pl.params<FusedSiluMulSplitParams>();
    pl.dispatch(pl.kernel("elementwise.cl", "silu_mul_split"), {size_t(p.im), size_t(p.tokens)}, {kRowGroup, 4},
                pl.buf("gate_up"), pl.buf("out"), p.tokens, p.im, 0, 0);
  });
  add_plan(t, ops::fused_silu_mul_split_strided, [](Planner& pl) {
    const auto& p = pl.params<FusedSiluMulSplitStridedParams>();
    pl.dispatch(pl.kernel("elementwise.cl", "silu_mul_split"), {size_t(p.intermediate), size_t(p.tokens)},
                {kRowGroup, 4}, pl.buf("gate_up"), pl.buf("out"), p.tokens, p.intermediate, p.in_row_offset,
                p.out_row_offset);
  });
}

}  // namespace ts::ocl
