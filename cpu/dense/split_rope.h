#pragma once
// The cpu's fused split + (norm +) RoPE of qkv rows (cpu/dense/rope.cpp), shared by split_qkv_norm_rope,
// its into-cache form and the paged family's split ops (cpu/attention/paged_split.cpp): one transform per head
// row, and a destination that says where each row lands.
#include <cstddef>
#include <cstdint>

#include "core/ops/core_params.h"
#include "core/tensor.h"
#include "cpu/runtime/inline_fn.h"

namespace ts::cpu {

// Where the split ops put each head row. q head h of token tok goes to q(h, tok); k and v head kh to
// kv(is_k, kh, tok) when that is one contiguous row, else (a row of vLLM's pools is scattered) to
// scatter(is_k, kh, tok, row). Token tok of qkv sits at RoPE position pos(tok).
struct SplitDest {
  InlineFn<std::byte*(int64_t h, int64_t tok)> q;
  InlineFn<std::byte*(bool is_k, int64_t kh, int64_t tok)> kv;
  InlineFn<void(bool is_k, int64_t kh, int64_t tok, const std::byte* row)> scatter;
  InlineFn<int64_t(int64_t tok)> pos;
};

// The split over `tokens` rows of qkv starting at `qkv`, each row q heads | k heads | v heads.
void split_qkv_norm_rope(const SplitQkvNormRopeParams& p, TensorMap& t, const std::byte* qkv, int64_t tokens,
                         const SplitDest& dest);

}  // namespace ts::cpu
