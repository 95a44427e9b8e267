// flash_attention_batched_per_cache: one decode query per sequence, each sequence with its own
// head-major caches k_caches.i, v_caches.i [nkv, capacity, hd] filled to kv_lens[i].
#include <cmath>
#include <string>

#include "core/ops/core/attention_common.h"
#include "core/ops/core/attention_view.h"
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"

namespace ts {
using namespace describe;

namespace {

using P = FlashAttentionBatchedPerCacheParams;

// The generator's lengths: spread evenly from 0 (an empty sequence) to capacity (a full one).
int64_t generated_len(const P& p, int64_t i) { return p.m == 1 ? p.capacity : p.capacity * i / (p.m - 1); }

}  // namespace

const Op& op_flash_attention_batched_per_cache() {
  using attn::inv_sqrt;
  const float s64 = inv_sqrt(64), s80 = inv_sqrt(80), s96 = inv_sqrt(96), s128 = inv_sqrt(128), s256 = inv_sqrt(256);
  static const TypedOp<P> op({
      .name = "flash_attention_batched_per_cache",
      .family = "core",
      .summary = "q [m,nq,hd], k_caches.i, v_caches.i [nkv,capacity,hd], kv_lens U32 [m] -> out [m,nq,hd]",
      .tensors = [](const P& p) {
        std::vector<TensorDecl> d{in("q", {p.m, p.nq, p.hd})};
        for (const char* list : {"k_caches.", "v_caches."})
          for (int64_t i = 0; i < p.m; ++i) d.push_back(in(list + std::to_string(i), {p.nkv, p.capacity, p.hd}));
        d.push_back(pinned(in("kv_lens", {p.m}), DType::U32));
        d.push_back(out("out", {p.m, p.nq, p.hd}));
        return d;
      },
      .validate_params = [](const P& p) {
        positive(p.m, "m (q's first dimension)");
        positive(p.hd, "hd");
        positive(p.capacity, "capacity");
        attn::check_gqa(p.nq, p.nkv, "nq", "nkv");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        const auto lens = to_indices(t.at("kv_lens"));
        for (int64_t i = 0; i < p.m; ++i)
          check(lens[i] <= p.capacity, "kv_lens[{}] = {} is past capacity {}", i, lens[i], p.capacity);
      },
      // m is q's first dimension; each sequence brings exactly one k and one v cache.
      .infer = [](P& p, const TensorMap& t) {
        p.m = dim_of(t, "q", 3, 0);
        for (const char* list : {"k_caches.", "v_caches."}) {
          const int64_t n = count_prefixed(t, list);
          check(n == p.m, "q holds {} sequences but there are {} {}* tensors", p.m, n, list);
        }
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["q"], r);
        auto* lens = t["kv_lens"].as<uint32_t>();
        for (int64_t i = 0; i < p.m; ++i) {
          lens[i] = static_cast<uint32_t>(generated_len(p, i));
          for (const char* list : {"k_caches.", "v_caches."})
            attn::normal_rows_then_nan(t[list + std::to_string(i)], r, p.nkv, p.capacity, lens[i], p.hd);
        }
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        return attn::softmax_tolerance(dt, p.hd, p.scale, p.capacity,
                                       attn::row_magnitudes(in, "q", "k_caches", "v_caches", p.hd));
      },
      // Assumes the generator's kv_lens (the cost model sees parameters only).
      .cost = [](const P& p, DType dt) {
        double rows = 0;
        for (int64_t i = 0; i < p.m; ++i) rows += double(generated_len(p, i));
        return Cost{4.0 * p.nq * rows * p.hd, bytes(dt, 2.0 * p.m * p.nq * p.hd + 2.0 * p.nkv * rows * p.hd) + 4.0 * p.m};
      },
      // A decode query per sequence, after every cached row (not causal: it sees [0, kv_lens[i])), over
      // its own head-major caches.
      .view = [](const P& p) {
        attn::DenseView v;
        v.seqs = p.m, v.num_heads = p.nq, v.kv_heads = p.nkv, v.q_len = 1;
        attn::head_major_rows(v);
        v.k1 = {"k_caches.", 0, p.capacity * p.hd, p.hd, true}, v.v = {"v_caches.", 0, p.capacity * p.hd, p.hd, true};
        v.dk1 = v.dv = p.hd, v.scale = p.scale, v.kv_len = p.capacity, v.kv_lens = "kv_lens";
        return std::any(v);
      },
      .cases = {
          {"m1_hd64", Tier::Smoke, {.nq = 4, .nkv = 4, .hd = 64, .scale = s64, .capacity = 33, .m = 1}},
          {"m3_gqa4_hd128", Tier::Smoke, {.nq = 8, .nkv = 2, .hd = 128, .scale = s128, .capacity = 50, .m = 3}},
          {"m5_gqa8_hd96", Tier::Ci, {.nq = 16, .nkv = 2, .hd = 96, .scale = s96, .capacity = 70, .m = 5}},
          {"m4_mqa_hd256", Tier::Ci, {.nq = 4, .nkv = 1, .hd = 256, .scale = s256, .capacity = 40, .m = 4}},
          // Lengths 0 and 1: an empty cache (zeros) next to a one-row one.
          {"m2_capacity1_hd80", Tier::Ci, {.nq = 2, .nkv = 1, .hd = 80, .scale = s80, .capacity = 1, .m = 2}},
          {"m6_hd128_ctx300", Tier::Ci, {.nq = 4, .nkv = 2, .hd = 128, .scale = s128, .capacity = 300, .m = 6}},
          // scale 400 on N(0,1) dots of 64: logits of magnitude up to ~1e4; exp must not overflow.
          {"logits_1e4", Tier::Ci, {.nq = 2, .nkv = 1, .hd = 64, .scale = 400.0f, .capacity = 64, .m = 3}},
          {"llama3_8b_m8_ctx512", Tier::Full, {.nq = 32, .nkv = 8, .hd = 128, .scale = s128, .capacity = 512, .m = 8}},
      },
      .benches = {
          {"llama3_8b_m8_ctx2048", Tier::Full, {.nq = 32, .nkv = 8, .hd = 128, .scale = s128, .capacity = 2048, .m = 8}},
      },
  });
  return op;
}

}  // namespace ts
