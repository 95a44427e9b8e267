#include "core/ops/kv/kv_pool.h"

#include <limits>

#include "core/ops/kv/kv_quant.h"

namespace ts::kvq {

using namespace describe;

std::vector<TensorDecl> pool_decls(KvDtype k, const paged::Pool& pool, Role role) {
  auto decl = [role](const char* name, Shape s) { return TensorDecl{name, role, DTypeRule::Activation, DType::F32, {}, std::move(s)}; };
  const Shape elems = pool.key_shape(), scales{pool.num_blocks, pool.kv_heads, pool.block_size};
  std::vector<TensorDecl> d{dtype_from(decl("layer_k", elems), "kv_dtype", k), dtype_from(decl("layer_v", elems), "kv_dtype", k)};
  if (has_scales(k)) {
    d.push_back(pinned(decl("layer_k_scales", scales), DType::F32));
    d.push_back(pinned(decl("layer_v_scales", scales), DType::F32));
  }
  return d;
}

void fill_pools(KvDtype k, const paged::Pool& pool, TensorMap& t, const Tensor& table, int64_t len, Rng& r) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* side : {"k", "v"}) {
    Tensor& elems = t.at(fmt::format("layer_{}", side));
    Tensor* scales = has_scales(k) ? &t.at(fmt::format("layer_{}_scales", side)) : nullptr;
    if (k == KvDtype::I8) {
      random_bytes(elems, r);  // I8 has no NaN: the NaN scale poisons the slot instead
    } else {
      elems.fill(nan);
    }
    if (scales) scales->fill(nan);
    const paged::SeqBlocks blocks{table.as<uint32_t>(), pool.block_size};
    std::vector<float> row(static_cast<size_t>(pool.head_dim));
    for (int64_t p = 0; p < len; ++p)
      for (int64_t h = 0; h < pool.kv_heads; ++h) {
        const bool zero = p == 0 && h == 0;
        for (float& x : row) x = zero ? 0.0f : static_cast<float>(r.normal());
        const int64_t b = blocks.block(p), s = blocks.slot(p);
        const float scale = store_row(k, row.data(), pool.head_dim, elems, pool.key_index(b, h, s, 0));
        if (scales) scales->set((b * pool.kv_heads + h) * pool.block_size + s, scale);
      }
  }
}

}  // namespace ts::kvq
