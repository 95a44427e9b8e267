#pragma once
// Parameter structs of the quant family (OPS.md, "Family quant"). Field names are the seed's argument
// names and the case file's metadata keys.
#include <cstdint>

#include "core/kinds.h"

namespace ts {

// dequantize and quantize: n_rows rows of n_cols values, each row stored as the GGUF blocks of `kind`
// (U8 [n_rows, row_bytes], row_bytes = n_cols / block_elems * block_bytes: core/quant/formats.h).
struct QuantRowsParams {
  QuantKind kind = QuantKind::Q4_0;
  int64_t n_rows = 1, n_cols = 32;
  template <class V> void fields(V& v) { v("kind", kind); v("n_rows", n_rows); v("n_cols", n_cols); }
};

}  // namespace ts
