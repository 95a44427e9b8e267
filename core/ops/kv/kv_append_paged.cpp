// kv_append_paged (int8_kv_append_paged for I8): k_in, v_in F32 [tokens, num_kv_heads, head_dim]
// quantized (I8, F8_E4M3: one F32 scale per token and kv head) or converted (F16, BF16) into the
// pools at positions cache_len_before + t, through paged_block_indices. Every slot not written keeps
// its value, and the whole pool is compared exactly: the quantization is defined to the bit.
#include <algorithm>
#include <cmath>

#include "core/ops/kv/kv_pool.h"
#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged_params.h"

namespace ts {
using namespace describe;

namespace {

using P = KvAppendPagedParams;

paged::Pool pool_of(const P& p) { return {paged::Layout::Ferrum, p.num_blocks, p.num_kv_heads, p.block_size, p.head_dim, 1}; }

// Rows that sit exactly on the rounding midpoints: for I8, (k + 1/2) x scale with a power-of-two scale
// (max|x| = 127 x scale), so x / scale is k + 1/2 exactly and rounds away from zero; for F8_E4M3, the
// midpoints between neighbouring codes x scale (max|x| = 448 x scale), which round to the even code.
void midpoint_row(KvDtype k, float* x, int64_t n, Rng& r) {
  const float scale = 0.25f;
  for (int64_t i = 0; i < n; ++i) {
    if (k == KvDtype::I8) {
      x[i] = (static_cast<float>(r.below(254) - 127) + 0.5f) * scale;  // k in [-127, 126]
    } else {
      const auto c = static_cast<uint8_t>(r.below(0x7E));  // codes 0 .. 0x7D and their upper neighbours
      const float mid = (f8e4m3_to_f32(c) + f8e4m3_to_f32(static_cast<uint8_t>(c + 1))) / 2;
      x[i] = (r.below(2) ? mid : -mid) * scale;
    }
  }
  x[r.below(n)] = kvq::qmax(k) * scale * (r.below(2) ? 1.0f : -1.0f);
}

// Inputs: token 0 of kv head 0 on the midpoints (quantized kinds), token 0 of the last kv head all
// zeros, the rest N(0, sigma) with sigma from 0.01 to 100 per row.
void generate_inputs(const P& p, Tensor& x, Rng& r) {
  float* v = x.as<float>();
  const int64_t hd = p.head_dim;
  for (int64_t row = 0; row < p.tokens * p.num_kv_heads; ++row) {
    float* xr = v + row * hd;
    if (row == 0 && has_scales(p.kv_dtype)) {
      midpoint_row(p.kv_dtype, xr, hd, r);
    } else if (row == p.num_kv_heads - 1) {
      std::fill(xr, xr + hd, 0.0f);
    } else {
      const double sigma = std::pow(10.0, r.uniform(-2, 2));
      for (int64_t i = 0; i < hd; ++i) xr[i] = static_cast<float>(sigma * r.normal());
    }
  }
}

P append(KvDtype k, int64_t cache_len_before, int64_t tokens, int64_t bs, int64_t nkv, int64_t hd) {
  P p{.kv_dtype = k, .cache_len_before = cache_len_before, .tokens = tokens, .block_size = bs, .num_kv_heads = nkv, .head_dim = hd};
  const int64_t len = cache_len_before + tokens;
  p.num_indices = (len + bs - 1) / bs + 1;
  p.num_blocks = paged::blocks_needed({len}, bs, 2);
  return p;
}

std::vector<Preset<P>> cases() {
  std::vector<Preset<P>> c;
  for (KvDtype k : {KvDtype::I8, KvDtype::F8_E4M3, KvDtype::F16, KvDtype::BF16}) {
    const std::vector<DType> f32{DType::F32};  // no activation tensor: k_in, v_in are F32 by definition
    c.push_back({named(k, "chunk5_after30_bs16_hd128"), Tier::Smoke, append(k, 30, 5, 16, 2, 128), f32});
    c.push_back({named(k, "decode_bs1_hd64"), Tier::Ci, append(k, 7, 1, 1, 4, 64), f32});
    c.push_back({named(k, "decode_on_boundary_bs16_hd64"), Tier::Ci, append(k, 16, 1, 16, 2, 64), f32});
    c.push_back({named(k, "from_empty_33_bs32_hd256"), Tier::Ci, append(k, 0, 33, 32, 1, 256), f32});
  }
  return c;
}

std::vector<Preset<P>> benches() {
  std::vector<Preset<P>> b;
  for (KvDtype k : {KvDtype::I8, KvDtype::F8_E4M3, KvDtype::F16, KvDtype::BF16}) {
    b.push_back({fmt::format("llama3_8b_prefill512_{}", enum_name(k)), Tier::Full, append(k, 0, 512, 16, 8, 128), {DType::F32}});
    b.push_back({fmt::format("llama3_8b_decode_b1_{}", enum_name(k)), Tier::Full, append(k, 4095, 1, 16, 8, 128), {DType::F32}});
  }
  return b;
}

}  // namespace

const Op& op_kv_append_paged() {
  static const TypedOp<P> op({
      .name = "kv_append_paged",
      .family = "kv",
      .summary = "k_in, v_in F32 [tokens,nkv,hd] quantized (I8, F8_E4M3: F32 scale per token, head) or converted into the pools at cache_len_before..",
      .tensors = [](const P& p) {
        std::vector<TensorDecl> d{pinned(in("k_in", {p.tokens, p.num_kv_heads, p.head_dim}), DType::F32),
                                  pinned(in("v_in", {p.tokens, p.num_kv_heads, p.head_dim}), DType::F32)};
        for (auto& pool : kvq::pool_decls(p.kv_dtype, pool_of(p), Role::InOut)) d.push_back(std::move(pool));
        d.push_back(pinned(in("paged_block_indices", {p.num_indices}), DType::U32));
        return d;
      },
      .validate_params = [](const P& p) {
        non_negative(p.cache_len_before, "cache_len_before");
        non_negative(p.tokens, "tokens");
        positive(p.block_size, "block_size");
        positive(p.num_kv_heads, "num_kv_heads");
        positive(p.head_dim, "head_dim");
        positive(p.num_blocks, "num_blocks (layer_k's first dimension)");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        paged::check_tables(t.at("paged_block_indices"), "paged_block_indices", {checked::add(p.cache_len_before, p.tokens, "positions cache_len_before + tokens")},
                            p.num_indices, p.block_size, p.num_blocks);
      },
      .infer = [](P& p, const TensorMap& t) {
        p.num_blocks = dim_of(t, "layer_k", 4, 0);
        p.num_indices = dim_of(t, "paged_block_indices", 1, 0);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        generate_inputs(p, t.at("k_in"), r);
        generate_inputs(p, t.at("v_in"), r);
        const int64_t len = p.cache_len_before + p.tokens;
        paged::generate_block_tables(t.at("paged_block_indices"), {len}, p.block_size, p.num_blocks, r);
        kvq::fill_pools(p.kv_dtype, pool_of(p), t, t.at("paged_block_indices"), len, r);
      },
      .tolerance = [](const P&, DType, const TensorMap&) { return Tolerance{0, 0, "defined to the bit: F32 max, divide, round, convert"}; },
      .cost = [](const P& p, DType) {
        const double rows = static_cast<double>(p.tokens * p.num_kv_heads), hd = static_cast<double>(p.head_dim);
        const double stored = bytes(storage_dtype(p.kv_dtype), hd) + (has_scales(p.kv_dtype) ? 4 : 0);
        return Cost{rows * hd * 2 * 3, 2 * rows * (4 * hd + stored)};
      },
      .cases = cases(),
      .benches = benches(),
  });
  return op;
}

}  // namespace ts
