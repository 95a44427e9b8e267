#pragma once
// The tiled GEMM kernel (kernels/gemm.cl) as the dense and the quant GEMMs plan it: the tile for the
// device, and its dispatch into a column range of the output.
#include <string>

#include "opencl/plan.h"

namespace ts::ocl {

struct GemmTile {
  int tm, tn, tk, wx, wy, rm, vw, nv;  // tile, k slab, work-group, register block rm x (nv x vw)
};

// The tile of this device (TOUCHSTONE_OPENCL_GEMM_TILE overrides it), its k slab shrunk to fit the
// device's local memory.
GemmTile gemm_tile(const DeviceLimits& lim);

// The build options of gemm_tiled for this tile and problem, plus `defines`.
std::string gemm_tile_defines(const GemmTile& t, int64_t m, int64_t n, int64_t k, const std::string& defines);
// The tile's options alone (never -DEVEN): one program for every problem shape.
std::string gemm_tile_defines(const GemmTile& t, const std::string& defines);

// out[:, ocol0 .. ocol0 + n] (row stride ldo) = a[m, k] @ b^T with gemm_tiled of `file` (gemm.cl, or a
// file that includes it with its own b staging and B_ARGS, the `extra` arguments).
template <class... Extra>
void dispatch_gemm_tiled(Planner& pl, const GemmTile& t, const std::string& file, const std::string& defines, cl_mem a,
                         cl_mem b, cl_mem out, int64_t m, int64_t n, int64_t k, int64_t ldo, int64_t ocol0,
                         const Extra&... extra) {
  const size_t wx = t.wx, wy = t.wy;
  pl.dispatch(pl.kernel(file, "gemm_tiled", gemm_tile_defines(t, m, n, k, defines)),
              {ceil_div(n, t.tn) * wx, ceil_div(m, t.tm) * wy}, {wx, wy}, a, b, out, m, n, k, ldo, ocol0, extra...);
}

}  // namespace ts::ocl
