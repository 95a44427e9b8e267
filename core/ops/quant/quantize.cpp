// quantize: bytes[n_rows, row_bytes] = the GGUF blocks of `kind` that ggml's reference quantizer
// (quantize_row_*_ref, no importance matrix) writes for x[n_rows, n_cols]: byte for byte what
// llama.cpp's quantizer writes. Round-trip tests and test data use it.
#include <cmath>

#include "core/ops/describe.h"
#include "core/ops/quant/rows_common.h"

namespace ts {
using namespace describe;

const Op& op_quantize() {
  static const TypedOp<QuantRowsParams> op({
      .name = "quantize",
      .family = "quant",
      .summary = "bytes[n_rows,row_bytes] U8 = ggml's reference quantizer of x[n_rows,n_cols] (GGUF kind)",
      .tensors = [](const QuantRowsParams& p) {
        return std::vector{in("x", {p.n_rows, p.n_cols}), pinned(out("bytes", quant_rows::bytes_shape(p)), DType::U8)};
      },
      .validate_params = quant_rows::check,
      // ggml's quantizers assume finite input (a NaN or an infinity turns a block's scale into NaN and
      // its integer conversions into undefined behaviour), so a case must not hold any.
      .validate_data = [](const QuantRowsParams&, const TensorMap& t) {
        const Tensor& x = t.at("x");
        for (int64_t i = 0; i < x.numel(); ++i) {
          const double v = x.get(i);
          check(std::isfinite(v), "tensor 'x': element {} is {}; quantize takes finite values", i, v);
        }
      },
      .generate = [](const QuantRowsParams& p, TensorMap& t, Rng& r) { quant_rows::source_rows(p, t["x"], r); },
      .tolerance = [](const QuantRowsParams&, DType, const TensorMap&) {
        return Tolerance{0, 0, "quantized blocks: bytes, compared bit for bit"};
      },
      .cost = [](const QuantRowsParams& p, DType dt) {
        const double values = static_cast<double>(p.n_rows) * static_cast<double>(p.n_cols);
        return Cost{values * quant_rows::quantize_flops_per_value(p.kind),
                    bytes(dt, values) + quant_rows::block_bytes_total(p)};
      },
      .cases = quant_rows::cases(kFloatDtypes),
      .benches = quant_rows::benches({DType::F32}),
  });
  return op;
}

}  // namespace ts
