// kv_paged_decode_attention (int8_paged_decode_attention for I8): one decode step of num_q_heads
// query heads over positions [0, valid_kv_len) of a pool of kv_dtype, dequantized on the fly (code x
// the scale of its token and kv head).
#include "core/ops/core/attention_common.h"
#include "core/ops/kv/kv_pool.h"
#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged/attention_view.h"
#include "core/ops/paged_params.h"

namespace ts {
using namespace describe;

namespace {

using P = KvPagedDecodeParams;

paged::Pool pool_of(const P& p) { return {paged::Layout::Ferrum, p.num_blocks, p.num_kv_heads, p.block_size, p.head_dim, 1}; }

P decode(KvDtype k, int64_t nq, int64_t nkv, int64_t hd, int64_t bs, int64_t len) {
  P p{.kv_dtype = k, .num_q_heads = nq, .num_kv_heads = nkv, .head_dim = hd, .valid_kv_len = len, .block_size = bs,
      .scale = attn::inv_sqrt(static_cast<double>(hd))};
  p.num_table = (len + bs - 1) / bs + 1;
  p.num_blocks = paged::blocks_needed({len}, bs, 2);
  return p;
}

constexpr KvDtype kKinds[] = {KvDtype::I8, KvDtype::F8_E4M3, KvDtype::F16, KvDtype::BF16};

std::vector<Preset<P>> cases() {
  std::vector<Preset<P>> c;
  for (KvDtype k : kKinds) {
    c.push_back({named(k, "gqa4_hd128_bs16_len33"), Tier::Smoke, decode(k, 8, 2, 128, 16, 33)});
    c.push_back({named(k, "gqa8_hd64_bs1_len9"), Tier::Ci, decode(k, 8, 1, 64, 1, 9)});
    c.push_back({named(k, "gqa1_hd256_bs32_len64"), Tier::Ci, decode(k, 2, 2, 256, 32, 64)});
    c.push_back({named(k, "empty_bs16_hd64"), Tier::Ci, decode(k, 4, 1, 64, 16, 0)});
  }
  return c;
}

// Llama-3-8B decode (32 query heads on 8 kv heads of 128, blocks of 16): named as the issue reads
// them, the pool dtype last.
std::vector<Preset<P>> benches() {
  std::vector<Preset<P>> b;
  for (KvDtype k : kKinds)
    for (int64_t ctx : {1024, 4096, 16384})
      b.push_back({fmt::format("llama3_8b_ctx{}_{}", ctx, enum_name(k)), Tier::Full, decode(k, 32, 8, 128, 16, ctx)});
  return b;
}

}  // namespace

const Op& op_kv_paged_decode_attention() {
  static const TypedOp<P> op({
      .name = "kv_paged_decode_attention",
      .family = "kv",
      .summary = "decode q [nq,hd] over [0, valid_kv_len) of a kv_dtype pool through block_table, dequantized on the fly",
      .tensors = [](const P& p) {
        std::vector<TensorDecl> d{in("q", {p.num_q_heads, p.head_dim})};
        for (auto& pool : kvq::pool_decls(p.kv_dtype, pool_of(p), Role::In)) d.push_back(std::move(pool));
        d.push_back(pinned(in("block_table", {p.num_table}), DType::U32));
        d.push_back(out("output", {p.num_q_heads, p.head_dim}));
        return d;
      },
      .validate_params = [](const P& p) {
        attn::check_gqa(p.num_q_heads, p.num_kv_heads, "num_q_heads", "num_kv_heads");
        positive(p.head_dim, "head_dim");
        positive(p.block_size, "block_size");
        non_negative(p.valid_kv_len, "valid_kv_len");
        positive(p.num_blocks, "num_blocks (layer_k's first dimension)");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        paged::check_tables(t.at("block_table"), "block_table", {p.valid_kv_len}, p.num_table, p.block_size, p.num_blocks);
      },
      .infer = [](P& p, const TensorMap& t) {
        p.num_blocks = dim_of(t, "layer_k", 4, 0);
        p.num_table = dim_of(t, "block_table", 1, 0);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t.at("q"), r);
        paged::generate_block_tables(t.at("block_table"), {p.valid_kv_len}, p.block_size, p.num_blocks, r);
        kvq::fill_pools(p.kv_dtype, pool_of(p), t, t.at("block_table"), p.valid_kv_len, r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        const bool scaled = has_scales(p.kv_dtype);
        return attn::softmax_tolerance(dt, p.head_dim, p.scale, p.valid_kv_len,
                                       attn::pool_magnitudes(in, "q", "layer_k", "layer_v", p.head_dim,
                                                             scaled ? "layer_k_scales" : "", scaled ? "layer_v_scales" : ""));
      },
      .cost = [](const P& p, DType dt) {
        const double scale_bytes = has_scales(p.kv_dtype) ? 4 : 0;
        return paged::attention_cost(static_cast<double>(p.num_q_heads * p.valid_kv_len),
                                     static_cast<double>(p.num_kv_heads * p.valid_kv_len), p.head_dim,
                                     storage_dtype(p.kv_dtype), scale_bytes, static_cast<double>(p.num_q_heads), dt);
      },
      .view = [](const P& p) { return std::any(paged::kv_decode_view(p)); },
      .cases = cases(),
      .benches = benches(),
  });
  return op;
}

}  // namespace ts
