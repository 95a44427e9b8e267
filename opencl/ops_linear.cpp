// gemm: the tiled kernel for m > 8, the GEMV kernel (bandwidth-bound on the weight) for m <= 8.
#include <cstdlib>

#include "core/ops/core_params.h"
#include "plan.h"

namespace ts::ocl {
namespace {

struct GemmTile {
  int tm, tn, tk, rm, vw, nv;  // register block: rm x (nv vectors of vw)
};

// Tuned on PoCL (2 x Zen 4 cores, AVX-512): 16 work-items wide matches the SIMD width the driver
// maps dim 0 onto, and a deep k slab keeps the register block busy between barriers. On a GPU the
// same tile is a 16 x 8 work-group with 4 x 8 register blocks and 24 KiB of local memory.
GemmTile gemm_tile(const DeviceLimits& lim) {
  GemmTile t{64, 64, 64, 8, 16, 1};
  if (const char* env = std::getenv("TOUCHSTONE_OPENCL_GEMM_TILE"))  // tuning knob: "TM,TN,TK,RM,VW,NV"
    std::sscanf(env, "%d,%d,%d,%d,%d,%d", &t.tm, &t.tn, &t.tk, &t.rm, &t.vw, &t.nv);
  // Shrink the k slab until both staged slabs fit the device's local memory.
  while (t.tk > 4 && static_cast<size_t>(t.tk) * (t.tm + t.tn + 4) * 4 > lim.local_mem) t.tk /= 2;
  // Fewer, larger register blocks when the work-group would exceed the device's limit.
  while (static_cast<size_t>(t.tm / t.rm) * (t.tn / (t.vw * t.nv)) > lim.max_work_group) t.rm *= 2;
  return t;
}

void plan_gemm(Planner& pl) {
  const auto& p = pl.params<GemmParams>();
  if (p.m <= 8) {
    const int r = 4, wg = static_cast<int>(pl.reduction_group(p.k, 64));
    const int group = std::max(wg, static_cast<int>(p.m) * r);  // the write-out needs m * r work-items
    pl.dispatch(pl.kernel("gemv.cl", "gemv_rows", fmt::format("-DGM={} -DR={} -DWG={}", p.m, r, group)),
                {ceil_div(p.n, r) * group}, {size_t(group)}, pl.buf("a"), pl.buf("b"), pl.buf("out"), p.n, p.k);
    return;
  }
  const GemmTile t = gemm_tile(pl.limits());
  const bool even = p.m % t.tm == 0 && p.n % t.tn == 0 && p.k % t.tk == 0;
  const std::string defs =
      fmt::format("-DTM={} -DTN={} -DTK={} -DRM={} -DVW={} -DNV={}{}", t.tm, t.tn, t.tk, t.rm, t.vw, t.nv,
                  even ? " -DEVEN" : "");
  const size_t wx = t.tn / (t.vw * t.nv), wy = t.tm / t.rm;
  pl.dispatch(pl.kernel("gemm.cl", "gemm_tiled", defs), {ceil_div(p.n, t.tn) * wx, ceil_div(p.m, t.tm) * wy},
              {wx, wy}, pl.buf("a"), pl.buf("b"), pl.buf("out"), p.m, p.n, p.k);
}

}  // namespace

void add_linear_ops(PlanTable& t) { t["gemm"] = plan_gemm; }

}  // namespace ts::ocl
