#pragma once
// Parameter structs of the quant family (docs/catalog.md, "Family quant"). Field names are the seed's argument
// names and the case file's metadata keys.
#include <cstdint>

#include "core/checked.h"

#include "core/kinds.h"

namespace ts {

// dequantize and quantize: n_rows rows of n_cols values, each row stored as the GGUF blocks of `kind`
// (U8 [n_rows, row_bytes], row_bytes = n_cols / block_elems * block_bytes: core/quant/formats.h).
struct QuantRowsParams {
  QuantKind kind = QuantKind::Q4_0;
  int64_t n_rows = 1, n_cols = 32;
  template <class V> void fields(V& v) { v("kind", kind); v("n_rows", n_rows); v("n_cols", n_cols); }
};

// gemm_quant: out[m, n_rows] = a[m, n_cols] @ dequant(weight)^T, weight U8 [n_rows, row_bytes] holding
// the GGUF blocks of `kind`, exactly a GGUF tensor's bytes.
struct GemmQuantParams {
  QuantKind kind = QuantKind::Q4_0;
  int64_t m = 1, n_rows = 1, n_cols = 32;
  template <class V> void fields(V& v) { v("kind", kind); v("m", m); v("n_rows", n_rows); v("n_cols", n_cols); }
};

// gemm_quant_fused: parts weight.0, weight.1, ... of kinds kind.0, kind.1, ... and n_rows.0, ... rows,
// sharing n_cols; out[m, sum n_rows.i] holds the parts' outputs side by side (the seed's
// load_quant_fused: a fused QKV whose V is another kind). Two to kMaxParts parts: parts past the second
// are present when their n_rows.i is (a case file lists kind.i and n_rows.i of every part it has).
struct GemmQuantFusedParams {
  static constexpr int kMaxParts = 4;
  int64_t m = 1, n_cols = 32;
  QuantKind kind[kMaxParts] = {QuantKind::Q4_0, QuantKind::Q4_0, QuantKind::Q4_0, QuantKind::Q4_0};
  int64_t n_rows[kMaxParts] = {1, 1, 0, 0};
  // The number of parts: the first i with n_rows.i == 0 past the second (0 rows is not a part).
  int parts() const {
    int n = 2;
    while (n < kMaxParts && n_rows[n] != 0) ++n;
    return n;
  }
  int64_t total_rows() const {
    int64_t s = 0;
    for (int i = 0; i < parts(); ++i) s = checked::add(s, n_rows[i], "the parts' n_rows summed");
    return s;
  }
  template <class V> void fields(V& v) {
    static constexpr const char* kKind[] = {"kind.0", "kind.1", "kind.2", "kind.3"};
    static constexpr const char* kRows[] = {"n_rows.0", "n_rows.1", "n_rows.2", "n_rows.3"};
    v("m", m);
    v("n_cols", n_cols);
    for (int i = 0; i < kMaxParts; ++i) {
      if (i < 2) {
        v(kKind[i], kind[i]);
        v(kRows[i], n_rows[i]);
        continue;
      }
      // Optional parts, in order: the kind is required when the rows are given.
      v.optional(kRows[i], n_rows[i]);
      if (n_rows[i] == 0) break;
      v(kKind[i], kind[i]);
    }
  }
};

// gemm_gptq: out[m, n] = a[m, k] @ W, W[k, n] = scales[g, n] * (q[k, n] - zero[g, n]), g = g_idx[k]
// when desc_act (act-order) or k / group_size; AutoGPTQ's "gptq" packing (qweight I32 [k*bits/32, n],
// qzeros I32 [G, n*bits/32] stored minus one, scales F16 [G, n], G = k / group_size).
struct GptqParams {
  int64_t bits = 4, group_size = 32, m = 1, k = 32, n = 8;
  bool desc_act = false;
  template <class V> void fields(V& v) {
    v("bits", bits); v("group_size", group_size); v("m", m); v("k", k); v("n", n); v("desc_act", desc_act);
  }
};

// gemm_awq: out[m, n] = a[m, k] @ W, W[k, n] = scales[g, n] * (q[k, n] - zero[g, n]), g = k / group_size;
// AutoAWQ's GEMM packing (qweight I32 [k, n/8], qzeros I32 [G, n/8], eight 4-bit values per int32 in
// the order 0 2 4 6 1 3 5 7, scales F16 [G, n]).
struct AwqParams {
  int64_t bits = 4, group_size = 32, m = 1, k = 32, n = 8;
  template <class V> void fields(V& v) { v("bits", bits); v("group_size", group_size); v("m", m); v("k", k); v("n", n); }
};

}  // namespace ts
