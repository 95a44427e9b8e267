// The paged and kv families' references against the ops they are defined by: paged decode is flash
// attention over the gathered keys, vLLM's layout holds the same values as ferrum's, FlashAttention-2
// alignment is varlen alignment with seq_lens = pos_offsets + rows, tiles cover the same rows, and the
// KV quantizers round as docs/catalog.md says. Addresses are computed here from docs/catalog.md's layouts, independently
// of core/ops/paged/pool.h.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/dtype.h"
#include "core/op.h"
#include "core/ops/core_params.h"
#include "core/ops/paged_params.h"
#include "reference/reference.h"

namespace ts {
namespace {

const CaseSpec& preset(const std::string& op, const std::string& name) {
  for (const CaseSpec& c : op_or_throw(op).cases())
    if (c.name == name) return c;
  throw Error("no preset " + name);
}

TensorMap make(const std::string& op, const CaseSpec& c, DType dt = DType::F32) {
  return op_or_throw(op).make_case(c.params, dt, 11);
}

void expect_same_bits(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  int bad = 0;
  for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
    const double x = a.get(i), y = b.get(i);
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) ADD_FAILURE() << what << "[" << i << "]: " << x << " vs " << y, ++bad;
  }
}

// docs/catalog.md: ferrum [nb, nkv, bs, hd]; vLLM key [nb, nkv, hd/x, bs, x], value [nb, nkv, hd, bs].
int64_t ferrum_at(const Shape& s, int64_t b, int64_t h, int64_t slot, int64_t d) {
  return ((b * s[1] + h) * s[2] + slot) * s[3] + d;
}

// The same pools in vLLM's layout.
void to_vllm(const Tensor& k, const Tensor& v, int64_t x, Tensor& vk, Tensor& vv) {
  const Shape& s = k.shape();
  const int64_t nb = s[0], nkv = s[1], bs = s[2], hd = s[3];
  vk = Tensor(k.dtype(), {nb, nkv, hd / x, bs, x});
  vv = Tensor(v.dtype(), {nb, nkv, hd, bs});
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t h = 0; h < nkv; ++h)
      for (int64_t slot = 0; slot < bs; ++slot)
        for (int64_t d = 0; d < hd; ++d) {
          vk.set((((b * nkv + h) * (hd / x) + d / x) * bs + slot) * x + d % x, k.get(ferrum_at(s, b, h, slot, d)));
          vv.set(((b * nkv + h) * hd + d) * bs + slot, v.get(ferrum_at(s, b, h, slot, d)));
        }
}

// Decode over pools equals flash_attention over each sequence's keys gathered into contiguous rows.
TEST(PagedReference, DecodeIsFlashAttentionOverTheGatheredKeys) {
  const CaseSpec& c = preset("paged_decode_attention", "bs16_very_different_lengths");
  const auto& p = c.params.as<PagedDecodeParams>();
  TensorMap t = make("paged_decode_attention", c);
  ref::paged_decode_attention(p, t);
  const Tensor &kp = t.at("k_pool"), &vp = t.at("v_pool");
  const uint32_t* tables = t.at("block_tables").as<uint32_t>();
  const uint32_t* lens = t.at("context_lens").as<uint32_t>();
  const int64_t hd = p.head_dim, nh = p.num_heads, nkv = p.num_kv_heads;
  for (int64_t s = 0; s < p.num_seqs; ++s) {
    const int64_t n = lens[s];
    if (n == 0) {
      for (int64_t i = 0; i < nh * hd; ++i) EXPECT_EQ(t.at("out").get(s * nh * hd + i), 0.0) << "zero context";
      continue;
    }
    FlashAttentionParams f{.kv_len = n, .pos_offset = n - 1, .num_heads = nh, .num_kv_heads = nkv, .head_dim = hd,
                           .causal = true, .scale = p.softmax_scale()};
    TensorMap ft{{"q", Tensor(DType::F32, {1, nh, 1, hd})}, {"k", Tensor(DType::F32, {1, nkv, n, hd})},
                 {"v", Tensor(DType::F32, {1, nkv, n, hd})}, {"out", Tensor(DType::F32, {1, nh, 1, hd})}};
    for (int64_t i = 0; i < nh * hd; ++i) ft.at("q").set(i, t.at("q").get(s * nh * hd + i));
    for (int64_t h = 0; h < nkv; ++h)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t d = 0; d < hd; ++d) {
          const int64_t b = tables[s * p.max_num_blocks_per_seq + j / p.block_size];
          ft.at("k").set((h * n + j) * hd + d, kp.get(ferrum_at(kp.shape(), b, h, j % p.block_size, d)));
          ft.at("v").set((h * n + j) * hd + d, vp.get(ferrum_at(vp.shape(), b, h, j % p.block_size, d)));
        }
    ref::flash_attention(f, ft);
    for (int64_t i = 0; i < nh * hd; ++i)
      ASSERT_EQ(t.at("out").get(s * nh * hd + i), ft.at("out").get(i)) << "sequence " << s << " element " << i;
  }
}

// One sequence's prefill: row i sees [0, ctx - q_len + 1 + i), as a causal chunk at pos_offset
// ctx - q_len does.
TEST(PagedReference, PrefillIsACausalChunk) {
  const CaseSpec& c = preset("paged_decode_attention", "prefill_q7_bs16_gqa4_hd128");
  const auto& p = c.params.as<PagedDecodeParams>();
  TensorMap t = make("paged_decode_attention", c);
  ref::paged_decode_attention(p, t);
  const int64_t n = t.at("context_lens").as<uint32_t>()[0], hd = p.head_dim, nkv = p.num_kv_heads;
  FlashAttentionParams f{.q_len = p.q_len, .kv_len = n, .pos_offset = n - p.q_len, .num_heads = p.num_heads,
                         .num_kv_heads = nkv, .head_dim = hd, .causal = true, .scale = p.softmax_scale()};
  TensorMap ft{{"q", t.at("q")}, {"k", Tensor(DType::F32, {1, nkv, n, hd})}, {"v", Tensor(DType::F32, {1, nkv, n, hd})},
               {"out", Tensor(DType::F32, t.at("out").shape())}};
  ft.at("q") = Tensor(DType::F32, {1, p.num_heads, p.q_len, hd});
  for (int64_t i = 0; i < t.at("q").numel(); ++i) ft.at("q").set(i, t.at("q").get(i));
  ft.at("out") = Tensor(DType::F32, {1, p.num_heads, p.q_len, hd});
  const uint32_t* table = t.at("block_tables").as<uint32_t>();
  for (int64_t h = 0; h < nkv; ++h)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t d = 0; d < hd; ++d) {
        const int64_t b = table[j / p.block_size];
        ft.at("k").set((h * n + j) * hd + d, t.at("k_pool").get(ferrum_at(t.at("k_pool").shape(), b, h, j % p.block_size, d)));
        ft.at("v").set((h * n + j) * hd + d, t.at("v_pool").get(ferrum_at(t.at("v_pool").shape(), b, h, j % p.block_size, d)));
      }
  ref::flash_attention(f, ft);
  for (int64_t i = 0; i < t.at("out").numel(); ++i) ASSERT_EQ(t.at("out").get(i), ft.at("out").get(i)) << i;
}

// The vLLM ops on ferrum's values moved into vLLM's layout give ferrum's outputs, bit for bit.
TEST(PagedReference, VllmLayoutHoldsTheSameValues) {
  for (DType dt : {DType::F32, DType::F16}) {
    const int64_t x = 16 / static_cast<int64_t>(dtype_size(dt));
    const CaseSpec& c = preset("paged_varlen_attention", "very_different_lengths_bs16_gqa4_hd64");
    PagedVarlenParams p = c.params.as<PagedVarlenParams>();
    TensorMap t = make("paged_varlen_attention", c, dt);
    TensorMap v = t;
    ref::paged_varlen_attention(p, t);
    to_vllm(t.at("k_pool"), t.at("v_pool"), x, v.at("k_pool"), v.at("v_pool"));
    p.x = x;
    ref::paged_varlen_attention_vllm(p, v);
    expect_same_bits(t.at("out"), v.at("out"), "varlen vllm " + std::string(dtype_name(dt)));

    const CaseSpec& d = preset("paged_decode_attention", "bs16_very_different_lengths");
    PagedDecodeParams dp = d.params.as<PagedDecodeParams>();
    TensorMap dt1 = make("paged_decode_attention", d, dt), dt2 = dt1;
    ref::paged_decode_attention(dp, dt1);
    to_vllm(dt1.at("k_pool"), dt1.at("v_pool"), x, dt2.at("k_pool"), dt2.at("v_pool"));
    dp.x = x;
    ref::paged_varlen_attention_vllm_layout(dp, dt2);
    expect_same_bits(dt1.at("out"), dt2.at("out"), "decode vllm_layout " + std::string(dtype_name(dt)));
  }
}

// The split into vLLM's pools writes what the split into ferrum's writes, each at its own address.
TEST(PagedReference, SplitIntoVllmPoolsWritesTheSameValues) {
  const CaseSpec& c = preset("split_qkv_norm_rope_into_paged_cache", "chunk_across_blocks_bs16_hd64");
  PagedSplitParams p = c.params.as<PagedSplitParams>();
  TensorMap t = make("split_qkv_norm_rope_into_paged_cache", c);
  TensorMap v = t;
  to_vllm(t.at("cache_k"), t.at("cache_v"), 4, v.at("cache_k"), v.at("cache_v"));
  ref::split_qkv_norm_rope_into_paged_cache(p, t);
  p.x = 4;
  ref::split_qkv_norm_rope_into_paged_cache_vllm(p, v);
  Tensor k, vv;
  to_vllm(t.at("cache_k"), t.at("cache_v"), 4, k, vv);
  expect_same_bits(k, v.at("cache_k"), "cache_k");
  expect_same_bits(vv, v.at("cache_v"), "cache_v");
  expect_same_bits(t.at("q_out"), v.at("q_out"), "q_out");
}

// The single-sequence split equals split_qkv_norm_rope_into_cache with the pool's slots gathered.
TEST(PagedReference, SplitIntoPoolIsSplitIntoCache) {
  const CaseSpec& c = preset("split_qkv_norm_rope_into_paged_cache", "pos_offset_not_cache_len_bs16_hd64");
  const auto& p = c.params.as<PagedSplitParams>();
  TensorMap t = make("split_qkv_norm_rope_into_paged_cache", c);
  SplitQkvNormRopeIntoCacheParams q;
  static_cast<SplitQkvNormRopeParams&>(q) = p;
  q.cache_len = p.cache_len, q.cache_capacity = p.cache_len + p.tokens;
  const int64_t hd = p.head_dim, row = (p.q_heads + 2 * p.kv_heads) * hd;
  TensorMap u{{"q_norm_w", t.at("q_norm_w")}, {"k_norm_w", t.at("k_norm_w")}, {"cos", t.at("cos")}, {"sin", t.at("sin")},
              {"qkv", Tensor(DType::F32, {p.tokens, row})}, {"q_out", Tensor(DType::F32, {p.q_heads, p.tokens, hd})},
              {"cache_k", Tensor(DType::F32, {p.kv_heads, q.cache_capacity, hd})},
              {"cache_v", Tensor(DType::F32, {p.kv_heads, q.cache_capacity, hd})}};
  for (int64_t i = 0; i < p.tokens * row; ++i) u.at("qkv").set(i, t.at("qkv").get(i));
  ref::split_qkv_norm_rope_into_paged_cache(p, t);
  ref::split_qkv_norm_rope_into_cache(q, u);
  for (int64_t i = 0; i < p.q_heads * p.tokens * hd; ++i) ASSERT_EQ(t.at("q_out").get(i), u.at("q_out").get(i)) << i;
  const uint32_t* table = t.at("block_table").as<uint32_t>();
  for (int64_t h = 0; h < p.kv_heads; ++h)
    for (int64_t tok = 0; tok < p.tokens; ++tok)
      for (int64_t d = 0; d < hd; ++d) {
        const int64_t pos = p.cache_len + tok, b = table[pos / p.block_size];
        const int64_t at = ferrum_at(t.at("cache_k").shape(), b, h, pos % p.block_size, d);
        ASSERT_EQ(t.at("cache_k").get(at), u.at("cache_k").get((h * q.cache_capacity + pos) * hd + d));
        ASSERT_EQ(t.at("cache_v").get(at), u.at("cache_v").get((h * q.cache_capacity + pos) * hd + d));
      }
}

// FlashAttention-2's alignment with seq_lens = pos_offsets + rows is varlen's; lse is log sum exp.
TEST(PagedReference, Fa2AlignmentAndLse) {
  const CaseSpec& c = preset("paged_varlen_attention", "mixed3_bs16_gqa4_hd128");
  PagedVarlenParams p = c.params.as<PagedVarlenParams>();
  TensorMap t = make("paged_varlen_attention", c);
  TensorMap f = t;
  f.erase("pos_offsets");
  f.emplace("seq_lens", Tensor(DType::U32, {p.num_seqs}));
  f.emplace("lse", Tensor(DType::F32, {p.num_heads, p.total_q_tokens}));
  const uint32_t* cu = t.at("cu_seqlens_q").as<uint32_t>();
  for (int64_t s = 0; s < p.num_seqs; ++s)
    f.at("seq_lens").as<uint32_t>()[s] = t.at("pos_offsets").as<uint32_t>()[s] + cu[s + 1] - cu[s];
  ref::paged_varlen_attention(p, t);
  ref::paged_varlen_attention_fa2_ffi(p, f);
  expect_same_bits(t.at("out"), f.at("out"), "fa2 out");
  // lse of row 0 (sequence 0 at position 0, one key), head 0: the scaled score of that key.
  const int64_t hd = p.head_dim;
  const uint32_t b = t.at("block_tables").as<uint32_t>()[0];
  double dot = 0;
  for (int64_t d = 0; d < hd; ++d) dot += t.at("q").get(d) * t.at("k_pool").get(ferrum_at(t.at("k_pool").shape(), b, 0, 0, d));
  EXPECT_NEAR(f.at("lse").get(0), p.softmax_scale() * dot, 1e-5);
}

TEST(PagedReference, TilesComputeTheRowsTheyCover) {
  const CaseSpec& c = preset("paged_varlen_attention_vllm_tiled_q4", "very_different_lengths_bs16_gqa4_hd64_x4");
  const auto& p = c.params.as<PagedVarlenTiledParams>();
  TensorMap t = make("paged_varlen_attention_vllm_tiled_q4", c);
  TensorMap v = t;
  ref::paged_varlen_attention_vllm_tiled_q4(p, t);
  PagedVarlenParams vp;
  static_cast<PagedPoolParams&>(vp) = p;
  vp.num_seqs = p.num_seqs, vp.total_q_tokens = p.total_q_tokens, vp.max_kv_len = p.max_kv_len;
  ref::paged_varlen_attention_vllm(vp, v);
  expect_same_bits(t.at("out"), v.at("out"), "tiled");
}

// kv_append_paged's quantizers on hand-built rows (one token, one kv head, head_dim 8, a pool of one
// block of one slot).
Tensor append_one(KvDtype k, const std::vector<float>& x, float* scale_out) {
  KvAppendPagedParams p{.kv_dtype = k, .cache_len_before = 0, .tokens = 1, .block_size = 1, .num_kv_heads = 1,
                        .head_dim = static_cast<int64_t>(x.size()), .num_blocks = 1, .num_indices = 1};
  const DType st = storage_dtype(k);
  TensorMap t{{"k_in", Tensor(DType::F32, {1, 1, p.head_dim})}, {"v_in", Tensor(DType::F32, {1, 1, p.head_dim})},
              {"layer_k", Tensor(st, {1, 1, 1, p.head_dim})}, {"layer_v", Tensor(st, {1, 1, 1, p.head_dim})},
              {"layer_k_scales", Tensor(DType::F32, {1, 1, 1})}, {"layer_v_scales", Tensor(DType::F32, {1, 1, 1})},
              {"paged_block_indices", Tensor(DType::U32, {1})}};
  for (size_t i = 0; i < x.size(); ++i) t.at("k_in").set(static_cast<int64_t>(i), x[i]);
  ref::kv_append_paged(p, t);
  *scale_out = t.at("layer_k_scales").as<float>()[0];
  return t.at("layer_k");
}

TEST(KvReference, I8RoundsHalfAwayFromZero) {
  float scale = 0;
  // max|x| = 127 * 0.25: scale 0.25 exactly, so x / scale is exact.
  const Tensor q = append_one(KvDtype::I8, {31.75f, 0.625f, -0.625f, 0.375f, -0.375f, 0.125f, -31.75f, 0}, &scale);
  EXPECT_EQ(scale, 0.25f);
  const int8_t* c = q.as<int8_t>();
  EXPECT_EQ(c[0], 127);
  EXPECT_EQ(c[1], 3) << "2.5 rounds away from zero";
  EXPECT_EQ(c[2], -3) << "-2.5 rounds away from zero";
  EXPECT_EQ(c[3], 2) << "1.5 -> 2";
  EXPECT_EQ(c[4], -2);
  EXPECT_EQ(c[5], 1) << "0.5 -> 1";
  EXPECT_EQ(c[6], -127);
  EXPECT_EQ(c[7], 0);
}

TEST(KvReference, Fp8RoundsToEvenAndZeroRowsStoreZero) {
  float scale = 0;
  // max|x| = 448: scale 1. 1.0625 lies between 1 (code 0x38) and 1.125 (0x39): ties to even, 1.0;
  // 1.1875 between 1.125 (0x39) and 1.25 (0x3A): to 1.25.
  const Tensor q = append_one(KvDtype::F8_E4M3, {448, 1.0625f, 1.1875f, -1.0625f, 0, 0, 0, 0}, &scale);
  EXPECT_EQ(scale, 1.0f);
  const uint8_t* c = q.as<uint8_t>();
  EXPECT_EQ(c[0], 0x7E);
  EXPECT_EQ(c[1], 0x38);
  EXPECT_EQ(c[2], 0x3A);
  EXPECT_EQ(c[3], 0xB8);
  const Tensor z = append_one(KvDtype::I8, std::vector<float>(8, 0.0f), &scale);
  EXPECT_EQ(scale, 0.0f) << "a zero row stores scale 0";
  for (int i = 0; i < 8; ++i) EXPECT_EQ(z.as<int8_t>()[i], 0);
}

// Decode over an I8 pool is decode over the dequantized values.
TEST(KvReference, DecodeOverI8IsDecodeOverTheDequantizedPool) {
  const CaseSpec& c = preset("kv_paged_decode_attention", "I8_gqa4_hd128_bs16_len33");
  const auto& p = c.params.as<KvPagedDecodeParams>();
  TensorMap t = make("kv_paged_decode_attention", c);
  ref::kv_paged_decode_attention(p, t);
  TensorMap f = t;
  for (const char* side : {"k", "v"}) {
    const Tensor& q = t.at(std::string("layer_") + side);
    const Tensor& s = t.at(std::string("layer_") + side + "_scales");
    Tensor w(DType::F64, q.shape());
    for (int64_t i = 0; i < q.numel(); ++i) w.set(i, q.get(i) * s.get(i / p.head_dim));
    f.at(std::string("layer_") + side) = w;
  }
  // The same decode, written out here: softmax over the 33 positions of the table.
  const uint32_t* table = t.at("block_table").as<uint32_t>();
  const int64_t hd = p.head_dim, group = p.num_q_heads / p.num_kv_heads;
  for (int64_t h = 0; h < p.num_q_heads; ++h) {
    std::vector<double> sc(static_cast<size_t>(p.valid_kv_len));
    double m = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < p.valid_kv_len; ++j) {
      const int64_t base = ((table[j / p.block_size] * p.num_kv_heads + h / group) * p.block_size + j % p.block_size) * hd;
      double dot = 0;
      for (int64_t d = 0; d < hd; ++d) dot += t.at("q").get(h * hd + d) * f.at("layer_k").get(base + d);
      sc[j] = p.scale * dot, m = std::max(m, sc[j]);
    }
    for (double& s : sc) sum += (s = std::exp(s - m));
    for (int64_t d = 0; d < hd; ++d) {
      double o = 0;
      for (int64_t j = 0; j < p.valid_kv_len; ++j) {
        const int64_t base = ((table[j / p.block_size] * p.num_kv_heads + h / group) * p.block_size + j % p.block_size) * hd;
        o += sc[j] / sum * f.at("layer_v").get(base + d);
      }
      ASSERT_NEAR(t.at("output").get(h * hd + d), o, 1e-6 * (1 + std::fabs(o))) << h << " " << d;
    }
  }
}

}  // namespace
}  // namespace ts
