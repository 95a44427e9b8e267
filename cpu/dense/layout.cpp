// Data movement: copy_slice, embedding lookups, split_qkv, transposes and KV-cache appends. Every
// element moves bit for bit, so these work on bytes and serve every dtype alike.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "core/ops/core_params.h"
#include "cpu/kernels.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/stream_copy.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {

namespace {
constexpr int64_t kGrainBytes = 1 << 17;  // bytes per thread below which one thread copies alone

// Copies `rows` rows of `row_bytes`: row r from src(r) to dst(r), rows split across threads.
template <class Src, class Dst> void copy_rows(int64_t rows, size_t row_bytes, Src src, Dst dst) {
  const int64_t grain = std::max<int64_t>(1, kGrainBytes / static_cast<int64_t>(std::max<size_t>(row_bytes, 1)));
  const bool stream = static_cast<size_t>(rows) * row_bytes >= kStreamOutputBytes;
  parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    if (!stream) {
      for (int64_t r = r0; r < r1; ++r) std::memcpy(dst(r), src(r), row_bytes);
      return;
    }
    for (int64_t r = r0; r < r1; ++r) stream_copy(dst(r), src(r), row_bytes);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // streaming stores are weakly ordered
  });
}

const uint32_t* ids_of(const TensorMap& t, const std::string& name) {
  const auto it = t.find(name);
  check(it != t.end() && it->second.dtype() == DType::U32, "cpu backend: '{}' must be a U32 tensor", name);
  return it->second.as<uint32_t>();
}

void embedding(TensorMap& t, int64_t n, int64_t dim) {
  const Tensor& table = tensor(t, "table");
  Tensor& out = tensor(t, "out");
  const uint32_t* ids = ids_of(t, "ids");
  const size_t rb = dim * dtype_size(table.dtype());
  copy_rows(n, rb, [&](int64_t r) { return table.data() + ids[r] * rb; }, [&](int64_t r) { return out.data() + r * rb; });
}

// [a, b, dim] -> [b, a, dim].
void transpose(const Tensor& src, Tensor& dst, int64_t a, int64_t b, int64_t dim) {
  const size_t rb = dim * dtype_size(src.dtype());
  copy_rows(a * b, rb, [&](int64_t r) { return src.data() + r * rb; },
            [&](int64_t r) { return dst.data() + ((r % b) * a + r / b) * rb; });
}
}  // namespace

void add_layout(KernelTable& k) {
  k.add(ops::copy_slice, [](const CopySliceParams& p, TensorMap& t) {
    const Tensor& src = tensor(t, "src");
    Tensor& dst = tensor(t, "dst");
    const size_t es = dtype_size(src.dtype());
    // Two tensors, so never overlapping: one contiguous run, cut into pieces for the threads.
    constexpr size_t kPiece = 1 << 16;
    const size_t bytes = p.len * es;
    const std::byte* from = src.data() + p.src_offset * es;
    std::byte* to = dst.data() + p.dst_offset * es;
    const size_t whole = bytes / kPiece;
    copy_rows(static_cast<int64_t>(whole), kPiece, [&](int64_t r) { return from + r * kPiece; },
              [&](int64_t r) { return to + r * kPiece; });
    std::memcpy(to + whole * kPiece, from + whole * kPiece, bytes - whole * kPiece);
  });
  k.add(ops::embedding_lookup,
                               [](const EmbeddingLookupParams& p, TensorMap& t) { embedding(t, p.n, p.dim); });
  k.add(ops::embedding_lookup_dev, [](const EmbeddingLookupDevParams& p, TensorMap& t) {
    embedding(t, p.batch, p.dim);
  });
  k.add(ops::split_qkv, [](const SplitQkvParams& p, TensorMap& t) {
    const Tensor& qkv = tensor(t, "qkv");
    const size_t es = dtype_size(qkv.dtype());
    const int64_t width = p.q_dim + 2 * p.kv_dim;
    struct Part { Tensor* dst; int64_t col, cols; };
    const Part parts[] = {{&tensor(t, "q"), 0, p.q_dim}, {&tensor(t, "k"), p.q_dim, p.kv_dim},
                          {&tensor(t, "v"), p.q_dim + p.kv_dim, p.kv_dim}};
    for (const Part& part : parts)
      copy_rows(p.tokens, part.cols * es, [&](int64_t r) { return qkv.data() + (r * width + part.col) * es; },
                [&](int64_t r) { return part.dst->data() + r * part.cols * es; });
  });
  k.add(ops::kv_cache_append_head_major, [](const KvCacheAppendHeadMajorParams& p,
                                                                       TensorMap& t) {
    for (const char* kv : {"k", "v"}) {
      const Tensor& src = tensor(t, fmt::format("new_{}_head_major", kv));
      Tensor& cache = tensor(t, fmt::format("cache_{}", kv));
      const size_t rb = p.hd * dtype_size(src.dtype());
      // Row (h, i) of the new block lands at cache row (h, cache_len + i).
      copy_rows(p.nkv * p.new_tokens, rb, [&](int64_t r) { return src.data() + r * rb; }, [&](int64_t r) {
        return cache.data() + ((r / p.new_tokens) * p.cache_capacity + p.cache_len + r % p.new_tokens) * rb;
      });
    }
  });
  k.add(ops::transpose_head_to_token, [](const TransposeParams& p, TensorMap& t) {
    transpose(tensor(t, "src"), tensor(t, "dst"), p.heads, p.tokens, p.dim);
  });
  k.add(ops::transpose_token_to_head, [](const TransposeParams& p, TensorMap& t) {
    transpose(tensor(t, "src"), tensor(t, "dst"), p.tokens, p.heads, p.dim);
  });
  k.add(
      ops::kv_cache_append_batched_per_cache, [](const KvCacheAppendBatchedPerCacheParams& p, TensorMap& t) {
        const Tensor& nd = tensor(t, "new_data");
        const uint32_t* lens = ids_of(t, "cache_lens");
        const size_t rb = p.hd * dtype_size(nd.dtype());
        for (int64_t i = 0; i < p.m; ++i) {
          Tensor& cache = tensor(t, fmt::format("caches.{}", i));
          for (int64_t h = 0; h < p.nkv; ++h)
            std::memcpy(cache.data() + (h * p.capacity + lens[i]) * rb, nd.data() + (i * p.nkv + h) * rb, rb);
        }
      });
}

}  // namespace ts::cpu
