#pragma once
// The dense attention view of flash_attention, mla_attention, flash_attention_batched_per_cache and
// gqa_attention (docs/catalog.md, "Family core", "The dense attention view"): where each sequence's
// query and output rows lie, where its keys and values lie (affine rows: tensor, element offset,
// strides), how the key splits into a first part and an optional second (MLA's latent and rope
// parts), the head sizes, and which keys a row sees (causal, sliding window, position offset, the kv
// length fixed or per sequence). Each op's description returns its view (OpDef::view), computed once
// from the parameters; the reference, cpu, OpenCL and Vulkan read it and none derives it again.
//
// Why a sibling of paged::AttentionView rather than an affine pool mode inside it: the paged view's
// sequences come from U32 tensors in five modes, always causal over a prefix, and its K/V from a pool
// of one head_dim through block tables; the dense ops need none of that, but do need per-tensor
// strides, a split key, a value width of its own, sliding windows, free position offsets and lists of
// per-sequence tensors. One type holding both would make every reader of either carry (and check for)
// fields it never reads. The two views meet where they should, at each engine's own K/V description
// (cpu KvView, OpenCL Attention, Vulkan Attn): one short mapping per view type and backend.
#include <cstdint>
#include <string>

#include "core/ops/core/attention_common.h"
#include "core/tensor.h"

// The ops that are one computation over their dense attention view (their descriptions' OpDef::view):
// the reference and every backend register them on their one attention engine from this list, so an
// op that rides the engine adds its line here and none of its own in a backend.
#define TS_DENSE_ATTENTION_VIEW_OPS(X) \
  X(flash_attention) X(mla_attention) X(flash_attention_batched_per_cache) X(gqa_attention)

namespace ts::attn {

// Rows of one K or V tensor: the row of key j of (sequence b, kv head kh) starts at element
// b * seq + kh * head + j * row of `tensor`; with per_seq, sequence b has its own tensor `tensor` + b
// ("k_caches." -> k_caches.0, k_caches.1, ...) and seq is 0. Strides count elements of the tensor.
struct KvRows {
  std::string tensor;
  int64_t seq = 0, head = 0, row = 0;
  bool per_seq = false;

  std::string name(int64_t b) const { return per_seq ? tensor + std::to_string(b) : tensor; }
  int64_t start(int64_t b, int64_t kh) const { return (per_seq ? 0 : b * seq) + kh * head; }
  bool operator==(const KvRows&) const = default;
};

struct DenseView {
  std::string q = "q", out = "out";
  int64_t seqs = 1, num_heads = 1, kv_heads = 1, q_len = 1;
  // Query and output rows (dqk, dv elements): (sequence b, head h, position i) is row
  // b * num_heads * q_len + h * head_rows + i * pos_rows: head-major [b, nh, q_len] is (q_len, 1),
  // token-major [b, q_len, nh] is (1, num_heads).
  int64_t head_rows = 1, pos_rows = 1;
  // Key row j = [k1 row j (dk1 elements) | k2 row j (dk2; none when k2.tensor is empty)], value row j
  // = v row j (dv). MLA's values are the latent key rows themselves: v == k1.
  KvRows k1, k2, v;
  int64_t dk1 = 1, dk2 = 0, dv = 1;
  // The score scale. A double: gqa_attention's 1/sqrt(head_dim) is exact in the reference's double,
  // rounded once to float by the kernels (a float parameter converts to it exactly).
  double scale = 1;
  // Position i of a sequence sits at pos_offset + i and sees keys visible(pos_offset + i, kv, causal,
  // window) (attention_common.h), kv its sequence's keys: kv_len, or kv_lens[b] (U32 [seqs]) when
  // kv_lens is named, kv_len then the most it may be (what a device's key split covers).
  bool causal = false;
  int64_t window = 0, pos_offset = 0, kv_len = 0;
  std::string kv_lens;

  int64_t dqk() const { return dk1 + dk2; }
  int64_t group() const { return num_heads / kv_heads; }  // query heads per kv head
  bool token_major() const { return head_rows == 1 && pos_rows == num_heads; }
  bool values_are_keys() const { return v == k1; }
  int64_t row(int64_t b, int64_t h, int64_t i) const { return b * num_heads * q_len + h * head_rows + i * pos_rows; }
  KeyRange visible_keys(int64_t i, int64_t kv) const { return visible(pos_offset + i, kv, causal, window); }
  // Sequence b's kv length, read from the case's tensors (validated against kv_len by the op).
  int64_t keys(const TensorMap& t, int64_t b) const {
    return kv_lens.empty() ? kv_len : int64_t{t.at(kv_lens).as<uint32_t>()[b]};
  }
};

// Query and output rows head-major [seqs, nh, q_len] or token-major [seqs, q_len, nh] (the view's
// head_rows, pos_rows).
inline void head_major_rows(DenseView& v) { v.head_rows = v.q_len, v.pos_rows = 1; }
inline void token_major_rows(DenseView& v) { v.head_rows = 1, v.pos_rows = v.num_heads; }

}  // namespace ts::attn
