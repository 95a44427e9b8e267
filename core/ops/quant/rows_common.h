#pragma once
// What the descriptions of dequantize and quantize share: parameter checks against the kind's block
// format, the shape of a bytes tensor, the source rows and valid blocks the generators write, the
// case list every kind is tried at, the cost model, and the check that a bytes tensor's rows have
// the length its kind implies (every quant op with GGUF bytes uses it).
#include <vector>

#include "core/op.h"
#include "core/ops/quant_params.h"
#include "core/quant/formats.h"

namespace ts::quant_rows {

// n_rows positive, kind a GGUF block kind, n_cols a positive multiple of its block: one-line Errors
// naming the parameter and what is expected.
void check(const QuantRowsParams& p);

// [n_rows, row_bytes] of the kind (the kind checked first).
Shape bytes_shape(const QuantRowsParams& p);

// Source rows for the quantizer, [n_rows, n_cols] in x's dtype: row r is N(0, sigma_r) with sigma
// cycling 0.25, 1, 4, 0.01, 100 (scales from f16-normal to large), and, as in ggml's own test data,
// the first block of row 1 all zeros and an outlier (20 sigma) at column 3 of row 2.
void source_rows(const QuantRowsParams& p, Tensor& x, Rng& r);

// Valid block bytes [n_rows, row_bytes]: even rows are source_rows quantized by the reference
// quantizer; odd rows are random bytes with random finite f16 scales: every quant bit pattern and every
// value of the packed scale fields (Q6_K's positive scales, Q4_K/Q5_K mins above the block's), which
// the quantizer alone would not write.
void valid_blocks(const QuantRowsParams& p, Tensor& bytes, Rng& r);

// The two halves of valid_blocks, for any source: even rows of src (F32 [n_rows, n_cols]) quantized,
// odd rows random bits with random f16 scales of magnitude below max_scale, into bytes.
void fill_blocks(QuantKind k, const Tensor& src, double max_scale, Tensor& bytes, Rng& r);

// A one-line Error unless tensor `name` (if present and 2-D) has rows of exactly row_bytes(kind,
// n_cols) bytes, saying why that is the length ("768 Q4_K values = 3 blocks of 144 bytes").
void check_block_rows(const TensorMap& t, const std::string& name, QuantKind kind, int64_t n_cols);

// Every kind at 1, 5 and 129 rows, one block and several blocks per row; `dtypes` for the small
// cases (quantize's source rows may be F16 or BF16), F32 for the rest.
std::vector<Preset<QuantRowsParams>> cases(const std::vector<DType>& small_dtypes);
std::vector<Preset<QuantRowsParams>> benches(const std::vector<DType>& dtypes);

// Float ops per value of the reference algorithm (decoding: a multiply and an add; the k-quants'
// encoders: their scale searches), and the bytes of the blocks.
double dequantize_flops_per_value(QuantKind k);
double quantize_flops_per_value(QuantKind k);
double block_bytes_total(const QuantRowsParams& p);

}  // namespace ts::quant_rows
