// Data movement, bit-exact (kernels/layout.cl): slices, splits, gathers, transposes, cache appends.
#include "core/ops/core_params.h"
#include "opencl/plan.h"

namespace ts::ocl {
namespace {

constexpr size_t kCols = 64;  // work-group: 64 contiguous elements x 1 row

// dst[dst_off + r * dst_stride + c] = src[src_off + r * src_stride + c], r < rows, c < cols.
void copy_rows(Planner& pl, const std::string& src, const std::string& dst, int64_t rows, int64_t cols,
               int64_t src_off, int64_t src_stride, int64_t dst_off, int64_t dst_stride) {
  pl.dispatch(pl.kernel("layout.cl", "copy_rows"), {size_t(cols), size_t(rows)}, {kCols, 1}, pl.buf(src),
              pl.buf(dst), rows, cols, src_off, src_stride, dst_off, dst_stride);
}

void gather(Planner& pl, int64_t n, int64_t dim) {
  pl.dispatch(pl.kernel("layout.cl", "gather_rows"), {size_t(dim), size_t(n)}, {kCols, 1}, pl.buf("table"),
              pl.buf("ids"), pl.buf("out"), n, dim);
}

// [na, nb, dim] -> [nb, na, dim]
void transpose(Planner& pl, int64_t na, int64_t nb, int64_t dim) {
  pl.dispatch(pl.kernel("layout.cl", "transpose_01"), {size_t(dim), size_t(nb), size_t(na)}, {kCols, 1, 1},
              pl.buf("src"), pl.buf("dst"), na, nb, dim);
}

}  // namespace

void add_layout_ops(PlanTable& t) {
  add_plan(t, ops::copy_slice, [](Planner& pl) {
    const auto& p = pl.params<CopySliceParams>();
    copy_rows(pl, "src", "dst", 1, p.len, p.src_offset, 0, p.dst_offset, 0);
  });
  add_plan(t, ops::embedding_lookup, [](Planner& pl) {
    const auto& p = pl.params<EmbeddingLookupParams>();
    gather(pl, shape_numel(pl.decl("ids").shape), p.dim);
  });
  add_plan(t, ops::embedding_lookup_dev, [](Planner& pl) {
    const auto& p = pl.params<EmbeddingLookupDevParams>();
    gather(pl, p.batch, p.dim);
  });
  add_plan(t, ops::split_qkv, [](Planner& pl) {
    const auto& p = pl.params<SplitQkvParams>();
    const int64_t row = p.q_dim + 2 * p.kv_dim;
    copy_rows(pl, "qkv", "q", p.tokens, p.q_dim, 0, row, 0, p.q_dim);
    copy_rows(pl, "qkv", "k", p.tokens, p.kv_dim, p.q_dim, row, 0, p.kv_dim);
    copy_rows(pl, "qkv", "v", p.tokens, p.kv_dim, p.q_dim + p.kv_dim, row, 0, p.kv_dim);
  });
  add_plan(t, ops::kv_cache_append_head_major, [](Planner& pl) {
    const auto& p = pl.params<KvCacheAppendHeadMajorParams>();
    // Each head's new rows are contiguous in both: one row of new_tokens * hd elements per head.
    const int64_t n = p.new_tokens * p.hd;
    copy_rows(pl, "new_k_head_major", "cache_k", p.nkv, n, 0, n, p.cache_len * p.hd, p.cache_capacity * p.hd);
    copy_rows(pl, "new_v_head_major", "cache_v", p.nkv, n, 0, n, p.cache_len * p.hd, p.cache_capacity * p.hd);
  });
  add_plan(t, ops::transpose_head_to_token, [](Planner& pl) {
    const auto& p = pl.params<TransposeParams>();
    transpose(pl, p.heads, p.tokens, p.dim);
  });
  add_plan(t, ops::transpose_token_to_head, [](Planner& pl) {
    const auto& p = pl.params<TransposeParams>();
    transpose(pl, p.tokens, p.heads, p.dim);
  });
  add_plan(t, ops::kv_cache_append_batched_per_cache, [](Planner& pl) {
    const auto& p = pl.params<KvCacheAppendBatchedPerCacheParams>();
    // One dispatch per cache: each item's cache is its own buffer.
    for (int64_t i = 0; i < p.m; ++i)
      pl.dispatch(pl.kernel("layout.cl", "append_at_len"), {size_t(p.hd), size_t(p.nkv)}, {kCols, 1},
                  pl.buf("new_data"), pl.buf("cache_lens"), pl.buf(fmt::format("caches.{}", i)), i, p.nkv, p.hd,
                  p.capacity);
  });
}

}  // namespace ts::ocl
