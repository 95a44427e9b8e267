#pragma once
// What the softmax-attention ops (flash_attention, mla_attention, flash_attention_batched_per_cache)
// share: the visibility rule, the GQA check, kv generation with poisoned rows, and the tolerance.
#include <cmath>
#include <cstdint>
#include <string>

#include "core/ops/describe.h"

namespace ts::attn {

// Kv positions [begin, end) that a query at absolute position `pos` sees (docs/catalog.md, Conventions):
// causal j <= pos; sliding_window w > 0 also j >= pos + 1 - w; always j < kv_len.
struct KeyRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end > begin ? end - begin : 0; }
};
KeyRange visible(int64_t pos, int64_t kv_len, bool causal, int64_t sliding_window);

// Visible (query, key) pairs of a chunk of q_len queries at pos_offset: the cost models' work count.
double visible_pairs(int64_t q_len, int64_t pos_offset, int64_t kv_len, bool causal, int64_t sliding_window);

// Query head h reads kv head h / (num_heads / num_kv_heads).
// The usual softmax scale 1/sqrt(d), as the presets spell it.
inline float inv_sqrt(double d) { return float(1 / std::sqrt(d)); }

void check_gqa(int64_t num_heads, int64_t num_kv_heads, const char* heads_name, const char* kv_heads_name);

// Fills `x`, viewed as [groups, rows, width], with N(0,1) in rows below `valid_rows` and NaN after
// (cache rows a kernel must never read).
void normal_rows_then_nan(Tensor& x, Rng& r, int64_t groups, int64_t rows, int64_t valid_rows, int64_t width);

// What softmax attention's error depends on, read from the case: the longest query and key rows (L2
// norms: |q.k| <= |q||k|, and the dot's F32 error scales with sum |q_d k_d| <= |q||k|) and the
// largest |v|; `what` names where they were read.
struct Magnitudes {
  double q_norm = 0, k_norm = 0, v_max = 0;
  std::string what;
};
// Queries, keys and values of rows of `dot_len` contiguous elements (tensors or lists `name.i`).
Magnitudes row_magnitudes(const TensorMap& in, const std::string& q, const std::string& k, const std::string& v,
                          int64_t dot_len);
// Keys and values in pools of any layout, each element the stored value times its row's scale where
// `k_scales` / `v_scales` are given (a quantized KV pool): a key row's norm is then bounded by
// sqrt(dot_len) max|k|.
Magnitudes pool_magnitudes(const TensorMap& in, const std::string& q, const std::string& k, const std::string& v,
                           int64_t dot_len, const std::string& k_scales = "", const std::string& v_scales = "");

// The logits' bound |scale| |q| |k| and how far an F32 computation may move any of them (ds), from the
// case's magnitudes; the derivation is in the .cpp.
struct LogitError {
  double max = 0, error = 0;
};
LogitError logit_error(int64_t dot_len, double scale, const Magnitudes& m);

// Softmax attention over at most `max_keys` keys, scores scale * (dot of `dot_len` products), the
// case's magnitudes `m`; the derivation is in the .cpp.
Tolerance softmax_tolerance(DType dt, int64_t dot_len, double scale, int64_t max_keys, const Magnitudes& m);

}  // namespace ts::attn
