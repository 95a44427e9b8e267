// gemm, linear_3d, linear_3d_bias: the tiled kernel for m > 8, the GEMV kernel (bandwidth-bound on the
// weight) for m <= 8.
#include <cstdio>
#include <cstdlib>

#include "core/ops/core_params.h"
#include "core/ops/tensor_params.h"
#include "opencl/dense/gemm_tile.h"

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

// out[m, n] = a[m, k] @ b[n, k]^T (+ bias[n] when `bias` is named): the GEMV for m <= 8, the tiled
// kernel above. With a bias the same kernels run from linear_bias_gemv.cl / linear_bias_gemm.cl, which
// add it to each F32 result before the one rounding.
void plan_gemm_rows(Planner& pl, int64_t m, int64_t n, int64_t k, const std::string& a, const std::string& b,
                    const std::string& out, const std::string& bias) {
  if (m <= 8) {
    // R x m partial sums per work-item: 8 vectors at most (registers).
    const bool cpu = pl.limits().cpu;
    const int r = std::max<int>(1, 8 / static_cast<int>(m)), vw = cpu ? 16 : 4;
    const int wg = cpu ? 1 : static_cast<int>(pl.reduction_group(k / vw, 64));
    const std::string defines = fmt::format("-DGM={} -DR={} -DWG={} -DVW={}", m, r, wg, vw);
    const std::vector<size_t> global{ceil_div(n, r) * wg}, local{size_t(wg)};
    if (bias.empty())
      pl.dispatch(pl.kernel("gemv.cl", "gemv_rows", defines), global, local, pl.buf(a), pl.buf(b), pl.buf(out), n, k);
    else
      pl.dispatch(pl.kernel("linear_bias_gemv.cl", "gemv_rows", defines), global, local, pl.buf(a), pl.buf(b),
                  pl.buf(out), n, k, pl.buf(bias));
    return;
  }
  if (bias.empty())
    return dispatch_gemm_tiled(pl, gemm_tile(pl.limits()), "gemm.cl", "", pl.buf(a), pl.buf(b), pl.buf(out), m, n, k,
                               n, 0);
  dispatch_gemm_tiled(pl, gemm_tile(pl.limits()), "linear_bias_gemm.cl", "", pl.buf(a), pl.buf(b), pl.buf(out), m, n,
                      k, n, 0, pl.buf(bias));
}

void plan_gemm(Planner& pl) {
  const auto& p = pl.params<GemmParams>();
  plan_gemm_rows(pl, p.m, p.n, p.k, "a", "b", "out", "");
}

// linear_3d(_bias): the gemm of the batch * seq rows of x.
template <class P> void plan_linear(Planner& pl, const char* bias) {
  const auto& p = pl.params<P>();
  plan_gemm_rows(pl, p.batch * p.seq, p.n, p.k, "x", "weight", "out", bias);
}

}  // namespace

void add_linear_ops(PlanTable& t) {
  add_plan(t, ops::gemm, plan_gemm);
  add_plan(t, ops::linear_3d, [](Planner& pl) { plan_linear<Linear3dParams>(pl, ""); });
  add_plan(t, ops::linear_3d_bias, [](Planner& pl) { plan_linear<Linear3dBiasParams>(pl, "bias"); });
}

}  // namespace ts::ocl
