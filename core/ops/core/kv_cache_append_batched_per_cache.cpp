// kv_cache_append_batched_per_cache: one decode token for each of m sequences, each with its own cache:
// caches.i[h, cache_lens[i], :] = new_data[i, h, :].
#include <string>

#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
KvCacheAppendBatchedPerCacheParams append(int64_t m, int64_t capacity, int64_t nkv, int64_t hd) {
  return {capacity, m, nkv, hd};
}
}  // namespace

const Op& op_kv_cache_append_batched_per_cache() {
  static const TypedOp<KvCacheAppendBatchedPerCacheParams> op({
      .name = "kv_cache_append_batched_per_cache",
      .family = "core",
      .summary = "caches.i[h, cache_lens[i], :] = new_data[i, h, :] for each of m caches",
      .tensors = [](const KvCacheAppendBatchedPerCacheParams& p) {
        std::vector<TensorDecl> d;
        for (int64_t i = 0; i < p.m; ++i) d.push_back(inout("caches." + std::to_string(i), {p.nkv, p.capacity, p.hd}));
        d.push_back(in("new_data", {p.m, p.nkv, p.hd}));
        d.push_back(pinned(in("cache_lens", {p.m}), DType::U32));
        return d;
      },
      .validate_params = [](const KvCacheAppendBatchedPerCacheParams& p) {
        positive(p.capacity, "capacity"); positive(p.m, "m"); positive(p.nkv, "nkv"); positive(p.hd, "hd");
      },
      // The appended row must exist: cache_lens[i] < capacity, else the cache is full (an Error).
      .validate_data = [](const KvCacheAppendBatchedPerCacheParams& p, const TensorMap& t) {
        indices_below("kv_cache_append_batched_per_cache", t, "cache_lens", p.capacity, "capacity");
      },
      // m sizes a list of tensors: it is checked against the caches present before any declaration is
      // built from it (a file of a few bytes could otherwise ask for 10^12 of them).
      .infer = [](KvCacheAppendBatchedPerCacheParams& p, const TensorMap& t) {
        const int64_t n = count_prefixed(t, "caches.");
        if (p.m <= n) return;  // more caches than m: validation names the stray ones
        int64_t first_missing = 0;
        while (t.count("caches." + std::to_string(first_missing))) ++first_missing;
        fail("kv_cache_append_batched_per_cache: missing tensor 'caches.{}' (m = {}, {} caches.* tensors present)",
             first_missing, p.m, n);
      },
      // Lengths differ per cache (the first is capacity - 1, the second 0); rows at or past each
      // cache's length are NaN, so a write to another row or cache shows up.
      .generate = [](const KvCacheAppendBatchedPerCacheParams& p, TensorMap& t, Rng& r) {
        index_values(t["cache_lens"], p.capacity, r);
        const uint32_t* lens = t["cache_lens"].as<uint32_t>();
        for (int64_t i = 0; i < p.m; ++i)
          cache_rows(t["caches." + std::to_string(i)], p.nkv, p.capacity, p.hd, lens[i], r);
        normal(t["new_data"], r);
      },
      .tolerance = [](const KvCacheAppendBatchedPerCacheParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const KvCacheAppendBatchedPerCacheParams& p, DType dt) {
        return Cost{0, bytes(dt, 2.0 * double(p.m) * double(p.nkv) * double(p.hd)) + 4.0 * double(p.m)};
      },
      .cases = {
          {"m1_cap1", Tier::Smoke, append(1, 1, 1, 1)},
          {"m3_cap5_nkv2_hd3", Tier::Smoke, append(3, 5, 2, 3)},
          {"m2_cap17_nkv3_hd7", Tier::Ci, append(2, 17, 3, 7)},
          {"m7_cap33_nkv1_hd33", Tier::Ci, append(7, 33, 1, 33)},
          {"m16_cap257_nkv2_hd17", Tier::Ci, append(16, 257, 2, 17)},
          {"llama3_8b_m5_cap64", Tier::Ci, append(5, 64, 8, 128)},
          {"llama3_8b_m32_cap256", Tier::Full, append(32, 256, 8, 128)},
      },
      .benches = {
          // Decode appends are latency-bound by nature (256 KB moved): this measures launch overhead.
          {"llama3_8b_m32_cap1024", Tier::Full, append(32, 1024, 8, 128)},
      },
  });
  return op;
}

}  // namespace ts
