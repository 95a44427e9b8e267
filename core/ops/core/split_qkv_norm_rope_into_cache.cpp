// split_qkv_norm_rope_into_cache: split_qkv_norm_rope whose k and v land at rows cache_len .. of
// head-major caches [kv_heads, cache_capacity, head_dim]; q is written head-major as before.
#include "core/ops/core/rope_common.h"
#include "core/ops/core_params.h"

namespace ts {
using namespace describe;

namespace {

using P = SplitQkvNormRopeIntoCacheParams;

P with_cache(SplitQkvNormRopeParams s, int64_t cache_len, int64_t cache_capacity) {
  P p;
  static_cast<SplitQkvNormRopeParams&>(p) = s;
  p.cache_len = cache_len;
  p.cache_capacity = cache_capacity;
  return p;
}

// Rows below cache_len hold earlier tokens; the rows about to be written hold stale values (a missed
// write shows); rows past the new tokens are NaN and must stay NaN.
void fill_cache(const P& p, Tensor& cache, Rng& r) {
  for (int64_t h = 0; h < p.kv_heads; ++h) {
    const int64_t base = h * p.cache_capacity * p.head_dim;
    for (int64_t i = 0; i < (p.cache_len + p.tokens) * p.head_dim; ++i) cache.set(base + i, r.normal());
    poison_nan(cache, base + (p.cache_len + p.tokens) * p.head_dim, base + p.cache_capacity * p.head_dim);
  }
}

}  // namespace

const Op& op_split_qkv_norm_rope_into_cache() {
  static const TypedOp<P> op({
      .name = "split_qkv_norm_rope_into_cache",
      .family = "core",
      .summary = "split_qkv_norm_rope with k, v written at rows cache_len.. of cache_k, cache_v [kvh,capacity,hd]",
      .tensors = [](const P& p) {
        auto d = rope::split_inputs(p);
        d.push_back(inout("cache_k", {p.kv_heads, p.cache_capacity, p.head_dim}));
        d.push_back(inout("cache_v", {p.kv_heads, p.cache_capacity, p.head_dim}));
        d.push_back(out("q_out", {p.q_heads, p.tokens, p.head_dim}));
        return d;
      },
      .validate_params = [](const P& p) {
        rope::check_split_params(p);
        non_negative(p.cache_len, "cache_len");
        positive(p.cache_capacity, "cache_capacity");
        check(checked::fits(p.cache_len, p.tokens, p.cache_capacity),
              "cache rows cache_len {} + tokens {} do not fit cache_capacity {}", p.cache_len, p.tokens,
              p.cache_capacity);
      },
      // Positions index the tables only when RoPE applies (qk_mode 0 never reads them).
      .validate_data = [](const P& p, const TensorMap&) {
        rope::check_positions(p.pos_offset, p.tokens, p.max_pos, p.qk_mode != rope::kTransposeOnly);
      },
      .infer = [](P& p, const TensorMap& t) { p.max_pos = rope::infer_max_pos(t); },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        rope::generate_split_inputs(p, t, r);
        fill_cache(p, t.at("cache_k"), r);
        fill_cache(p, t.at("cache_v"), r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        return rope::tolerance(dt, p.qk_mode, p.head_dim, in, "qkv", {"q_norm_w", "k_norm_w"});
      },
      .cost = [](const P& p, DType dt) { return rope::split_cost(p, dt); },
      .cases = {
          {"prefill_empty_cache_hd128", Tier::Smoke,
           with_cache({.tokens = 5, .q_heads = 4, .kv_heads = 2, .head_dim = 128, .max_pos = 8}, 0, 9)},
          {"decode_hd64", Tier::Smoke,
           with_cache({.tokens = 1, .q_heads = 4, .kv_heads = 1, .head_dim = 64, .pos_offset = 12, .max_pos = 16}, 12, 16)},
          {"chunk_after_10_hd128", Tier::Ci,
           with_cache({.tokens = 5, .q_heads = 8, .kv_heads = 2, .head_dim = 128, .pos_offset = 10, .max_pos = 32}, 10, 20)},
          // The chunk fills the cache to its last row.
          {"fills_capacity_mode2_hd80", Tier::Ci,
           with_cache({.tokens = 3, .q_heads = 2, .kv_heads = 2, .head_dim = 80, .pos_offset = 7, .qk_mode = 2, .max_pos = 10}, 7, 10)},
          {"partial_rotary_hd256", Tier::Ci,
           with_cache({.tokens = 2, .q_heads = 4, .kv_heads = 1, .head_dim = 256, .pos_offset = 4, .rotary_dim = 64, .max_pos = 6}, 4, 11)},
          // RoPE positions come from pos_offset, cache rows from cache_len: here they differ.
          {"pos_offset_not_cache_len_hd64", Tier::Ci,
           with_cache({.tokens = 3, .q_heads = 2, .kv_heads = 1, .head_dim = 64, .pos_offset = 20, .max_pos = 24}, 3, 8)},
          {"mode0_hd96", Tier::Ci,
           with_cache({.tokens = 4, .q_heads = 3, .kv_heads = 3, .head_dim = 96, .pos_offset = 2, .qk_mode = 0, .max_pos = 6}, 2, 8)},
          // Qwen3-8B decode step at position 1000 of a 2048-row cache.
          {"qwen3_8b_decode_pos1000", Tier::Full,
           with_cache({.tokens = 1, .q_heads = 32, .kv_heads = 8, .head_dim = 128, .pos_offset = 1000, .max_pos = 4096}, 1000, 2048)},
      },
      .benches = {
          {"qwen3_8b_prefill512_cap4096", Tier::Full,
           with_cache({.tokens = 512, .q_heads = 32, .kv_heads = 8, .head_dim = 128, .max_pos = 4096}, 0, 4096)},
      },
  });
  return op;
}

}  // namespace ts
