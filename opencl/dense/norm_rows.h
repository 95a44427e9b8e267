#pragma once
// The row RMS norm (kernels/norms.cl) as rms_norm and the fused MoE combine with the next layer's norm
// plan it: one work-group per row.
#include <cstdint>

#include "opencl/plan.h"

namespace ts::ocl {

// out[r, :] = rms_norm(x[r, :], eps) * w for r < rows, rows of dim elements.
void dispatch_rms_norm(Planner& pl, cl_mem x, cl_mem w, cl_mem out, int64_t rows, int64_t dim, float eps);

}  // namespace ts::ocl
