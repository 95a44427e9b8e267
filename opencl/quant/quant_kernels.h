#pragma once
// What the quant and moe planners share about the decode kernels (kernels/quant.h, gemv_core.h): the
// build options of a weight kind, the decode GEMV's work shape and the quant GEMM's tile on this device.
#include <cstdint>
#include <string>

#include "core/kinds.h"
#include "opencl/dense/gemm_tile.h"
#include "opencl/plan.h"

namespace ts::ocl {

// -DDQ32=dq32_<kind> -DQBE -DQBB for a GGUF kind; for a plain one (F32 / F16 / BF16 rows in the case
// dtype, whose element size is `plain_bytes`) dq32_plain with -DQPLAIN.
std::string kind_defines(QuantKind kind, size_t plain_bytes = 0);

// The decode GEMV's shape (kernels/gemv_core.h) for m activation rows of n_cols: r weight rows and wg
// work-items per group, units of u chunks; `defines` spells them (-DR -DWG -DU).
struct GemvShape {
  int r, wg;
  int64_t u;
  std::string defines() const;
};
GemvShape gemv_shape(const Planner& pl, QuantKind kind, int64_t m, int64_t n_cols);

// The tiled GEMM's tile for GGUF rows of n_cols (kernels/quant_slab.h): its k slab whole 32-value chunks
// dividing n_cols; an Error when even a 32-deep slab exceeds the device's local memory.
GemmTile quant_gemm_tile(const Planner& pl, int64_t n_cols);

}  // namespace ts::ocl
