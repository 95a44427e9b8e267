// dequantize: out[n_rows, n_cols] F32 = the GGUF blocks of `kind` in bytes[n_rows, row_bytes], decoded
// as ggml's dequantize_row_* decodes them.
#include "core/ops/describe.h"
#include "core/ops/quant/rows_common.h"

namespace ts {
using namespace describe;

const Op& op_dequantize() {
  static const TypedOp<QuantRowsParams> op({
      .name = "dequantize",
      .family = "quant",
      .summary = "out[n_rows,n_cols] F32 = ggml's dequantization of bytes[n_rows,row_bytes] (GGUF kind)",
      .tensors = [](const QuantRowsParams& p) {
        return std::vector{pinned(in("bytes", quant_rows::bytes_shape(p)), DType::U8),
                           pinned(out("out", {p.n_rows, p.n_cols}), DType::F32)};
      },
      .validate_params = quant_rows::check,
      .infer = [](QuantRowsParams& p, const TensorMap& t) { quant_rows::check_block_rows(t, "bytes", p.kind, p.n_cols); },
      .generate = [](const QuantRowsParams& p, TensorMap& t, Rng& r) { quant_rows::valid_blocks(p, t["bytes"], r); },
      // Every product in a decode is of an f16 scale (11 significant bits) with small integers (6-bit
      // sub-scale x 5-bit quant, or 8-bit signed scale x 6-bit quant): at most 24 bits, exact in F32.
      // What is left is one add or subtract, rounded once: any order of the same operations, FMA or
      // not, gives the same F32 bits.
      .tolerance = [](const QuantRowsParams&, DType, const TensorMap&) {
        return Tolerance{0, 0, "GGUF decode: exact F32 products of an f16 scale and small integers, one rounding: bit-exact"};
      },
      .cost = [](const QuantRowsParams& p, DType) {
        const double values = static_cast<double>(p.n_rows) * static_cast<double>(p.n_cols);
        return Cost{values * quant_rows::dequantize_flops_per_value(p.kind),
                    quant_rows::block_bytes_total(p) + bytes(DType::F32, values)};
      },
      .cases = quant_rows::cases({DType::F32}),
      .benches = quant_rows::benches({DType::F32}),
  });
  return op;
}

}  // namespace ts
