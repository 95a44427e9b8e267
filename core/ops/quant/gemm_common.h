#pragma once
// What the quant family's GEMMs share (gemm_quant, gemm_quant_fused, gemm_gptq, gemm_awq): the weight
// generators, the bound on a dequantized weight they keep to, the tolerance that follows from it, the
// cost model, and the check that a bytes tensor's rows have the length its kind implies.
#include <vector>

#include "core/op.h"
#include "core/ops/quant_params.h"
#include "core/quant/formats.h"

namespace ts::quant_gemm {

// Every weight the generators write dequantizes to |w| <= kWeightBound (activations are N(0, 1)).
// Tolerances do not assume it: they read the case's own magnitudes.
inline constexpr double kWeightBound = 8.0;

// Rows of GGUF blocks of kind `k` for a GEMM weight, U8 [n_rows, row_bytes]: even rows are N(0, 1)
// rows quantized by the reference quantizer (what a real checkpoint holds); odd rows are random bits
// with random finite f16 scales of either sign (subnormal ones included), every quant code and packed
// sub-scale reached, the scales bounded so that every weight keeps |w| <= kWeightBound.
void gguf_weight(QuantKind k, int64_t n_rows, int64_t n_cols, Tensor& bytes, Rng& r);

// F16 scales for GPTQ / AWQ: random sign and magnitude up to kWeightBound / 2^bits (a weight is a
// scale times q - z, |q - z| <= 2^bits), about one in 16 an f16 subnormal.
void f16_scales(Tensor& scales, int64_t bits, Rng& r);

// The tolerance of a dot product of k terms |a||w| <= a_max x w_max, rounded once to `out`: a_max the
// largest |activation| of the case, w_max the largest |weight| its bytes decode to.
Tolerance tolerance(DType out, int64_t k, double a_max, double w_max);

// The largest |W[k, j]| = |scale (q - zero)| a GPTQ / AWQ layer's tensors decode to (finite scales only).
double gptq_max_abs(const GptqParams& p, const TensorMap& in);
double awq_max_abs(const AwqParams& p, const TensorMap& in);

// 2 m n k flops; the weight bytes as given plus the activations and outputs in dtype dt.
Cost cost(double weight_bytes, int64_t m, int64_t n, int64_t k, DType dt);

}  // namespace ts::quant_gemm
