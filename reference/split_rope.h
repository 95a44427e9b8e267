#pragma once
// The reference's fused split + (norm +) RoPE of qkv rows, shared by the split ops of the core family
// (k and v into head-major tensors or caches) and of the paged family (k and v into a pool). Each head
// vector, once through the op's mode, goes to a sink: where it lands is the op's business.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/ops/core_params.h"
#include "core/tensor.h"

namespace ts::ref {

using HeadSink = std::function<void(int64_t head, int64_t token, const std::vector<double>&)>;

// Tokens 0 .. p.tokens - 1 of qkv rows [q heads | k heads | v heads] starting at element `first` of
// t["qkv"] (each row (q_heads + 2 kv_heads) * head_dim long), at RoPE positions p.pos_offset + token:
// q heads go through the mode with q_norm_w to put_q, k heads with k_norm_w to put_k, v heads
// unchanged to put_v.
void split_norm_rope(const SplitQkvNormRopeParams& p, const TensorMap& t, int64_t first, const HeadSink& put_q,
                     const HeadSink& put_k, const HeadSink& put_v);

}  // namespace ts::ref
