// Reference: the quant family's row ops, dequantize and quantize, over the block formats of
// reference/quant_blocks.cpp (core/quant/formats.h). These two are the exception to the reference's
// "loops in double": a GGUF kind is defined by ggml's float code, so they run it, in float.
#include <vector>

#include "core/quant/formats.h"
#include "reference/reference.h"

namespace ts::ref {

void dequantize(const QuantRowsParams& p, TensorMap& t) {
  const quant::Format& f = quant::block_format(p.kind);
  const int64_t row_bytes = quant::row_bytes(f, p.n_cols);
  const uint8_t* bytes = t.at("bytes").as<uint8_t>();
  float* out = t.at("out").as<float>();  // pinned F32
  for (int64_t r = 0; r < p.n_rows; ++r) f.dequantize_row(bytes + r * row_bytes, out + r * p.n_cols, p.n_cols);
}

void quantize(const QuantRowsParams& p, TensorMap& t) {
  const quant::Format& f = quant::block_format(p.kind);
  const int64_t row_bytes = quant::row_bytes(f, p.n_cols);
  const Tensor& x = t.at("x");
  uint8_t* bytes = t.at("bytes").as<uint8_t>();
  // ggml quantizes float rows: an F16 or BF16 case's values widen to F32 exactly first.
  std::vector<float> row(static_cast<size_t>(p.n_cols));
  for (int64_t r = 0; r < p.n_rows; ++r) {
    for (int64_t c = 0; c < p.n_cols; ++c) row[static_cast<size_t>(c)] = static_cast<float>(x.get(r * p.n_cols + c));
    f.quantize_row(row.data(), bytes + r * row_bytes, p.n_cols);
  }
}

}  // namespace ts::ref
