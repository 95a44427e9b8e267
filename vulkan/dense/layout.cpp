// Data movement (layout.comp): copy_slice, split_qkv, the transposes, the cache appends (strided
// 3-D copies) and the embedding gathers.
#include "core/ops/core_params.h"
#include "vulkan/dense/layout.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
constexpr uint32_t kWg = 256;  // layout.comp's work-group size (its specialization constant 0)

Dispatch copy(const Target& tg, const std::string& src, const std::string& dst, const Copy3d& c) {
  return layout_copy(tg, src, dst, c);
}

// A table above maxStorageBufferRange is gathered window by window (each dispatch copies the ids
// that fall in its rows).
std::vector<Dispatch> gather(const Target& tg, const Decls& decls, int64_t rows, int64_t dim) {
  const TensorDecl& table = decls.at("table");
  const uint64_t row_bytes = static_cast<uint64_t>(dim) * dtype_size(table.dtype);
  std::vector<Dispatch> out;
  for (auto [r0, nr] : tg.row_windows(table.shape.at(0), row_bytes)) {
    Dispatch d;
    d.shader = tg.variant(Kernel::layout_gather);
    d.spec = {kWg};
    d.bindings = {Binding("table", r0 * row_bytes, nr * row_bytes), "ids", "out"};
    d.push = Push().u(rows).u(dim).u(r0).u(nr).words();
    d.groups = grid_2d(rows, dim, kWg, tg);
    out.push_back(std::move(d));
  }
  return out;
}

// Cache [nkv, cap, hd] <- new [nkv, n, hd] at row `row`.
std::vector<Dispatch> append_head_major(const Target& tg, const KvCacheAppendHeadMajorParams& p) {
  Copy3d c{.n0 = p.nkv, .n1 = p.new_tokens, .n2 = p.hd, .so = 0, .ss0 = p.new_tokens * p.hd, .ss1 = p.hd,
           .dof = p.cache_len * p.hd, .ds0 = p.cache_capacity * p.hd, .ds1 = p.hd};
  return {copy(tg, "new_k_head_major", "cache_k", c), copy(tg, "new_v_head_major", "cache_v", c)};
}
}  // namespace

Dispatch layout_copy(const Target& tg, Binding src, Binding dst, const Copy3d& c) {
  Dispatch d;
  d.shader = tg.variant(Kernel::layout_copy);
  d.spec = {kWg};
  d.bindings = {std::move(src), std::move(dst)};
  d.push = Push().u(c.n0).u(c.n1).u(c.n2).u(c.so).u(c.ss0).u(c.ss1).u(c.dof).u(c.ds0).u(c.ds1).u(0).u(0).u(0).words();
  d.groups = grid_2d(c.n0 * c.n1, c.n2, kWg, tg);
  return d;
}

void add_layout_planners(PlannerTable& t) {
  add_planner(t, ops::copy_slice, [](const CopySliceParams& p, const Decls&, const Target& tg) {
    return std::vector{copy(tg, "src", "dst", {.n2 = p.len, .so = p.src_offset, .dof = p.dst_offset})};
  });
  add_planner(
      t, ops::embedding_lookup, [](const EmbeddingLookupParams& p, const Decls& decls, const Target& tg) {
        return gather(tg, decls, shape_numel(decls.at("ids").shape), p.dim);
      });
  add_planner(
      t, ops::embedding_lookup_dev, [](const EmbeddingLookupDevParams& p, const Decls& decls, const Target& tg) {
        return gather(tg, decls, p.batch, p.dim);
      });
  add_planner(t, ops::split_qkv, [](const SplitQkvParams& p, const Decls&, const Target& tg) {
    const int64_t w = p.q_dim + 2 * p.kv_dim;
    return std::vector{
        copy(tg, "qkv", "q", {.n1 = p.tokens, .n2 = p.q_dim, .so = 0, .ss1 = w, .ds1 = p.q_dim}),
        copy(tg, "qkv", "k", {.n1 = p.tokens, .n2 = p.kv_dim, .so = p.q_dim, .ss1 = w, .ds1 = p.kv_dim}),
        copy(tg, "qkv", "v", {.n1 = p.tokens, .n2 = p.kv_dim, .so = p.q_dim + p.kv_dim, .ss1 = w, .ds1 = p.kv_dim}),
    };
  });
  add_planner(
      t, ops::transpose_head_to_token, [](const TransposeParams& p, const Decls&, const Target& tg) {
        // src [heads, tokens, dim] -> dst [tokens, heads, dim]
        return std::vector{copy(tg, "src", "dst",
                                {.n0 = p.heads, .n1 = p.tokens, .n2 = p.dim, .ss0 = p.tokens * p.dim, .ss1 = p.dim,
                                 .ds0 = p.dim, .ds1 = p.heads * p.dim})};
      });
  add_planner(
      t, ops::transpose_token_to_head, [](const TransposeParams& p, const Decls&, const Target& tg) {
        // src [tokens, heads, dim] -> dst [heads, tokens, dim]
        return std::vector{copy(tg, "src", "dst",
                                {.n0 = p.heads, .n1 = p.tokens, .n2 = p.dim, .ss0 = p.dim, .ss1 = p.heads * p.dim,
                                 .ds0 = p.tokens * p.dim, .ds1 = p.dim})};
      });
  add_planner(
      t, ops::kv_cache_append_head_major,
      [](const KvCacheAppendHeadMajorParams& p, const Decls&, const Target& tg) { return append_head_major(tg, p); });
  add_planner(
      t, ops::kv_cache_append_batched_per_cache,
      [](const KvCacheAppendBatchedPerCacheParams& p, const Decls&, const Target& tg) {
        // One dispatch per cache; the row comes from cache_lens on the device.
        std::vector<Dispatch> out;
        for (int64_t i = 0; i < p.m; ++i) {
          Dispatch d;
          d.shader = tg.variant(Kernel::layout_append_at);
          d.spec = {kWg};
          d.bindings = {"new_data", "caches." + std::to_string(i), "cache_lens"};
          d.push = Push()
                       .u(p.nkv).u(1).u(p.hd)                       // n0, n1, n2
                       .u(i * p.nkv * p.hd).u(p.hd).u(0)            // so, ss0, ss1
                       .u(0).u(p.capacity * p.hd).u(0)              // dof, ds0, ds1
                       .u(i).u(p.hd).u(p.capacity)                  // item, row_stride, row_limit
                       .words();
          d.groups = grid_2d(p.nkv, p.hd, kWg, tg);
          out.push_back(std::move(d));
        }
        return out;
      });
}

}  // namespace ts::vk
