// Reference: data movement (copy_slice, embeddings, split_qkv, transposes, KV-cache appends).
// Elements are copied as bytes, so every bit survives (NaN payloads and signed zeros included) and
// the expected outputs of these ops are bit-exact.
#include <cstring>
#include <string>

#include "core/checked.h"
#include "reference/reference.h"

namespace ts::ref {
namespace {

// dst[di .. di+n) = src[si .. si+n), in elements of the tensors' (equal) dtype.
// Both ranges are checked (validation already guarantees them; a gap there is an Error, never a
// write past a tensor).
void copy_elems(Tensor& dst, int64_t di, const Tensor& src, int64_t si, int64_t n) {
  check(checked::fits(di, n, dst.numel()) && checked::fits(si, n, src.numel()),
        "reference: copy of {} elements from [{}] of {} to [{}] of {} is out of range", n, si, src.numel(), di,
        dst.numel());
  const size_t esz = dtype_size(src.dtype());
  std::memcpy(dst.data() + di * esz, src.data() + si * esz, static_cast<size_t>(n) * esz);
}

void gather_rows(const Tensor& table, const Tensor& ids_t, int64_t dim, Tensor& out) {
  const auto ids = to_indices(ids_t);
  for (size_t i = 0; i < ids.size(); ++i) copy_elems(out, static_cast<int64_t>(i) * dim, table, ids[i] * dim, dim);
}

// [a, b, dim] -> [b, a, dim]: both transposes are this with the roles of tokens and heads swapped.
void swap_outer(const Tensor& src, int64_t a, int64_t b, int64_t dim, Tensor& dst) {
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j) copy_elems(dst, (j * a + i) * dim, src, (i * b + j) * dim, dim);
}

}  // namespace

void copy_slice(const CopySliceParams& p, TensorMap& t) {
  copy_elems(t.at("dst"), p.dst_offset, t.at("src"), p.src_offset, p.len);
}

void embedding_lookup(const EmbeddingLookupParams& p, TensorMap& t) {
  gather_rows(t.at("table"), t.at("ids"), p.dim, t.at("out"));
}

void embedding_lookup_dev(const EmbeddingLookupDevParams& p, TensorMap& t) {
  gather_rows(t.at("table"), t.at("ids"), p.dim, t.at("out"));
}

void split_qkv(const SplitQkvParams& p, TensorMap& t) {
  const Tensor& qkv = t.at("qkv");
  const int64_t width = p.q_dim + 2 * p.kv_dim;
  for (int64_t r = 0; r < p.tokens; ++r) {
    copy_elems(t.at("q"), r * p.q_dim, qkv, r * width, p.q_dim);
    copy_elems(t.at("k"), r * p.kv_dim, qkv, r * width + p.q_dim, p.kv_dim);
    copy_elems(t.at("v"), r * p.kv_dim, qkv, r * width + p.q_dim + p.kv_dim, p.kv_dim);
  }
}

void kv_cache_append_head_major(const KvCacheAppendHeadMajorParams& p, TensorMap& t) {
  for (const char* kv : {"k", "v"}) {
    Tensor& cache = t.at(std::string("cache_") + kv);
    const Tensor& fresh = t.at(std::string("new_") + kv + "_head_major");
    // Head h's new rows land at cache rows cache_len .. cache_len + new_tokens of that head.
    for (int64_t h = 0; h < p.nkv; ++h)
      copy_elems(cache, (h * p.cache_capacity + p.cache_len) * p.hd, fresh, h * p.new_tokens * p.hd,
                 p.new_tokens * p.hd);
  }
}

void transpose_head_to_token(const TransposeParams& p, TensorMap& t) {
  swap_outer(t.at("src"), p.heads, p.tokens, p.dim, t.at("dst"));
}

void transpose_token_to_head(const TransposeParams& p, TensorMap& t) {
  swap_outer(t.at("src"), p.tokens, p.heads, p.dim, t.at("dst"));
}

void kv_cache_append_batched_per_cache(const KvCacheAppendBatchedPerCacheParams& p, TensorMap& t) {
  const auto lens = to_indices(t.at("cache_lens"));
  const Tensor& fresh = t.at("new_data");
  for (int64_t i = 0; i < p.m; ++i) {
    Tensor& cache = t.at("caches." + std::to_string(i));
    for (int64_t h = 0; h < p.nkv; ++h)
      copy_elems(cache, (h * p.capacity + lens[i]) * p.hd, fresh, (i * p.nkv + h) * p.hd, p.hd);
  }
}

}  // namespace ts::ref
