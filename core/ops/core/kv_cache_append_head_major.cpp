// kv_cache_append_head_major: new K/V [nkv, new_tokens, hd] land at rows cache_len .. cache_len +
// new_tokens of each head of the head-major caches [nkv, cache_capacity, hd].
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
KvCacheAppendHeadMajorParams append(int64_t cache_len, int64_t capacity, int64_t new_tokens, int64_t nkv, int64_t hd) {
  return {cache_len, capacity, new_tokens, nkv, hd};
}
}  // namespace

const Op& op_kv_cache_append_head_major() {
  static const TypedOp<KvCacheAppendHeadMajorParams> op({
      .name = "kv_cache_append_head_major",
      .family = "core",
      .summary = "cache_{k,v}[h, cache_len + t, :] = new_{k,v}_head_major[h, t, :]",
      .tensors = [](const KvCacheAppendHeadMajorParams& p) {
        const Shape cache = {p.nkv, p.cache_capacity, p.hd}, fresh = {p.nkv, p.new_tokens, p.hd};
        return std::vector{inout("cache_k", cache), inout("cache_v", cache), in("new_k_head_major", fresh),
                           in("new_v_head_major", fresh)};
      },
      .validate_params = [](const KvCacheAppendHeadMajorParams& p) {
        non_negative(p.cache_len, "cache_len");
        positive(p.cache_capacity, "cache_capacity");
        positive(p.new_tokens, "new_tokens");
        positive(p.nkv, "nkv");
        positive(p.hd, "hd");
        check(checked::fits(p.cache_len, p.new_tokens, p.cache_capacity),
              "kv_cache_append_head_major: cache overflow: cache_len {} + new_tokens {} exceeds cache_capacity {}",
              p.cache_len, p.new_tokens, p.cache_capacity);
      },
      // Rows past cache_len are NaN (the rows about to be written included): an unwritten row, a write at
      // the wrong row or a read of a stale slot all show up.
      .generate = [](const KvCacheAppendHeadMajorParams& p, TensorMap& t, Rng& r) {
        cache_rows(t["cache_k"], p.nkv, p.cache_capacity, p.hd, p.cache_len, r);
        cache_rows(t["cache_v"], p.nkv, p.cache_capacity, p.hd, p.cache_len, r);
        normal(t["new_k_head_major"], r);
        normal(t["new_v_head_major"], r);
      },
      .tolerance = [](const KvCacheAppendHeadMajorParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const KvCacheAppendHeadMajorParams& p, DType dt) {
        return Cost{0, bytes(dt, 4.0 * double(p.nkv) * double(p.new_tokens) * double(p.hd))};
      },
      .cases = {
          {"len0_cap1_new1", Tier::Smoke, append(0, 1, 1, 1, 1)},
          {"len2_cap5_new3_full", Tier::Smoke, append(2, 5, 3, 2, 3)},
          {"len7_cap16_new1_hd17", Tier::Ci, append(7, 16, 1, 3, 17)},
          {"len0_cap33_new33_hd7", Tier::Ci, append(0, 33, 33, 1, 7)},
          {"len100_cap257_new57_hd33", Tier::Ci, append(100, 257, 57, 2, 33)},
          {"llama3_8b_decode_len63", Tier::Ci, append(63, 80, 1, 8, 128)},
          {"llama3_8b_decode_len1000", Tier::Full, append(1000, 1024, 1, 8, 128)},
          {"llama3_8b_prefill_512", Tier::Full, append(0, 4096, 512, 8, 128)},
      },
      .benches = {
          // A 2048-token prefill chunk after 1024 cached tokens: 32 MB per call in F32.
          {"llama3_8b_len1024_new2048", Tier::Full, append(1024, 4096, 2048, 8, 128)},
      },
  });
  return op;
}

}  // namespace ts
