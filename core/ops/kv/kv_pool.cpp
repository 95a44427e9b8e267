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
    // Positions 1 .. 4 of kv head 0 hold every code of a quantized kind in turn (NaN's excepted),
    // under a scale of 1/16, so a decoder that gets one code wrong (subnormal F8, I8's -128) fails.
    auto sweep = [&](int64_t p, int64_t b, int64_t s) {
      for (int64_t d = 0; d < pool.head_dim; ++d) {
        const auto code = static_cast<uint8_t>(((p - 1) * pool.head_dim + d) % 256);
        const bool nan = k == KvDtype::F8_E4M3 && (code & 0x7F) == 0x7F;
        elems.as<uint8_t>()[pool.key_index(b, 0, s, d)] = nan ? 0 : code;
      }
      scales->set(b * pool.kv_heads * pool.block_size + s, 1.0 / 16);
    };
    std::vector<float> row(static_cast<size_t>(pool.head_dim));
    for (int64_t p = 0; p < len; ++p)
      for (int64_t h = 0; h < pool.kv_heads; ++h) {
        const bool zero = p == 0 && h == 0;
        for (float& x : row) x = zero ? 0.0f : static_cast<float>(r.normal());
        const int64_t b = blocks.block(p), s = blocks.slot(p);
        if (scales && h == 0 && p >= 1 && p <= 4 && p * pool.head_dim <= 256 + pool.head_dim) {
          sweep(p, b, s);
          continue;
        }
        const float scale = store_row(k, row.data(), pool.head_dim, elems, pool.key_index(b, h, s, 0));
        if (scales) scales->set((b * pool.kv_heads + h) * pool.block_size + s, scale);
      }
  }
}

}  // namespace ts::kvq
