// gemm: the tiled kernel for m > 8, the GEMV kernel (bandwidth-bound on the weight) for m <= 8.
#include <cstdio>
#include <cstdlib>

#include "core/ops/core_params.h"
#include "gemm_tile.h"

namespace ts::ocl {

// CPU drivers (PoCL): one work-item per group walking 8 x 32 register blocks (16 AVX-512
// accumulators) over a 128 x 64 tile: PoCL keeps private values that live across barriers in
// per-work-item memory, so only a single work-item keeps its blocks in registers.
// GPUs: 16 x 16 work-items with a 4 x 4 register block each, 16 KiB of local memory.
GemmTile gemm_tile(const DeviceLimits& lim) {
  GemmTile t = lim.cpu ? GemmTile{128, 64, 64, 1, 1, 8, 16, 2} : GemmTile{64, 64, 32, 16, 16, 4, 4, 1};
  if (const char* env = std::getenv("TOUCHSTONE_OPENCL_GEMM_TILE"))  // tuning knob, the fields in order
    std::sscanf(env, "%d,%d,%d,%d,%d,%d,%d,%d", &t.tm, &t.tn, &t.tk, &t.wx, &t.wy, &t.rm, &t.vw, &t.nv);
  // Shrink the k slab until both staged slabs fit the device's local memory.
  while (t.tk > 4 && static_cast<size_t>(t.tk) * (t.tm + t.tn + 4) * 4 > lim.local_mem) t.tk /= 2;
  check(static_cast<size_t>(t.wx) * t.wy <= lim.max_work_group && t.tm % (t.wy * t.rm) == 0 &&
            t.tn % (t.wx * t.vw * t.nv) == 0 && t.tk % 4 == 0,
        "OpenCL gemm: inconsistent tile {}x{}x{} / {}x{} / {}x{}x{}", t.tm, t.tn, t.tk, t.wx, t.wy, t.rm, t.nv, t.vw);
  return t;
}

std::string gemm_tile_defines(const GemmTile& t, const std::string& defines) {
  return fmt::format("-DTM={} -DTN={} -DTK={} -DWX={} -DWY={} -DRM={} -DVW={} -DNV={}{}{}", t.tm, t.tn, t.tk, t.wx,
                     t.wy, t.rm, t.vw, t.nv, defines.empty() ? "" : " ", defines);
}

std::string gemm_tile_defines(const GemmTile& t, int64_t m, int64_t n, int64_t k, const std::string& defines) {
  const bool even = m % t.tm == 0 && n % t.tn == 0 && k % t.tk == 0;
  return gemm_tile_defines(t, even ? (defines.empty() ? "-DEVEN" : "-DEVEN " + defines) : defines);
}

namespace {

void plan_gemm(Planner& pl) {
  const auto& p = pl.params<GemmParams>();
  if (p.m <= 8) {
    // R x m partial sums per work-item: 8 vectors at most (registers).
    const bool cpu = pl.limits().cpu;
    const int r = std::max<int>(1, 8 / static_cast<int>(p.m)), vw = cpu ? 16 : 4;
    const int wg = cpu ? 1 : static_cast<int>(pl.reduction_group(p.k / vw, 64));
    pl.dispatch(pl.kernel("gemv.cl", "gemv_rows", fmt::format("-DGM={} -DR={} -DWG={} -DVW={}", p.m, r, wg, vw)),
                {ceil_div(p.n, r) * wg}, {size_t(wg)}, pl.buf("a"), pl.buf("b"), pl.buf("out"), p.n, p.k);
    return;
  }
  dispatch_gemm_tiled(pl, gemm_tile(pl.limits()), "gemm.cl", "", pl.buf("a"), pl.buf("b"), pl.buf("out"), p.m, p.n,
                      p.k, p.n, 0);
}

}  // namespace

void add_linear_ops(PlanTable& t) { add_plan(t, ops::gemm, plan_gemm); }

}  // namespace ts::ocl
