#pragma once
// The cpu's rms_norm rows (cpu/dense/norms.cpp), for the fused ops that end in the next layer's norm
// (weighted_sum_residual_norm_stacked): the same code as the rms_norm kernel, so a fused op equals its chain.
#include <cstdint>

#include "core/tensor.h"

namespace ts::cpu {

// out[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w for rows r < rows of dim values, in x's dtype.
void rms_norm_rows(const Tensor& x, const Tensor& w, Tensor& out, int64_t rows, int64_t dim, float eps);

}  // namespace ts::cpu
