// The reference of gemm, flash_attention, mla_attention and qk_norm_rope against independent
// implementations (Eigen matrices, std::complex rotations), on the ops' own generated F32 inputs:
// - in double they must agree to the last F32 bit (the reference rounds its double result once);
// - Eigen in F32 (its own blocked, vectorised reductions) must pass the op's derived tolerance;
// - a classic attention mistake (causal mask off by one, GQA head mapping by modulo) must not.
// Plus the clear errors the attention and RoPE ops give for bad parameters and data.
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include <Eigen/Dense>
#include <gtest/gtest.h>

#include "tests/expect_error.h"

#include "core/metrics.h"
#include "core/op.h"
#include "core/ops/core_params.h"
#include "reference/kernels.h"

namespace ts {
namespace {

template <class T> using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// rows x cols elements of `t` starting at element `offset`, row-major.
template <class T> RowMat<T> block(const Tensor& t, int64_t offset, int64_t rows, int64_t cols) {
  RowMat<T> m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) m.data()[i] = static_cast<T>(t.get(offset + i));
  return m;
}

// Inputs from the op's generator, expected output from the reference (F32 case).
TensorMap reference_case(const Op& op, const Params& p, const std::string& tag) {
  TensorMap t = op.make_case(p, DType::F32, stable_hash(op.name() + "/crosscheck/" + tag));
  op.validate(p, t);
  ref::run(op, p, t);
  return t;
}

// The same real numbers computed in double: at most one F32 rounding apart.
void expect_same_to_the_f32_ulp(const Tensor& want, const std::vector<double>& got, const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), want.numel()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got[static_cast<size_t>(i)], w = want.get(i);
    ASSERT_LE(std::fabs(g - w), 0x1p-24 * std::fabs(g) * (1 + 1e-9) + 1e-300)
        << what << " element " << i << ": reference " << w << ", independent " << g;
  }
}

Tensor f32_tensor(const Shape& shape, const std::vector<double>& v) {
  Tensor t(DType::F32, shape);
  from_f64(t, v);
  return t;
}

// ---- gemm ----

TEST(ReferenceCrossCheck, GemmMatchesEigen) {
  const Op& op = op_or_throw("gemm");
  const GemmParams shapes[] = {{1, 1, 1}, {7, 13, 67}, {33, 65, 31}, {3, 129, 1000}, {16, 64, 4096}};
  for (const auto& s : shapes) {
    const std::string tag = fmt::format("m{}_n{}_k{}", s.m, s.n, s.k);
    const Params p = Params::of(s);
    const TensorMap t = reference_case(op, p, tag);
    auto product = [&]<class T>(T) -> std::vector<double> {
      const RowMat<T> c = block<T>(t.at("a"), 0, s.m, s.k) * block<T>(t.at("b"), 0, s.n, s.k).transpose();
      return {c.data(), c.data() + c.size()};
    };
    expect_same_to_the_f32_ulp(t.at("out"), product(0.0), "gemm double " + tag);
    const Tolerance tol = op.tolerance(p, DType::F32, t);
    const ErrorReport f32 = compare(t.at("out"), f32_tensor({s.m, s.n}, product(0.0f)), tol);
    EXPECT_TRUE(f32.pass()) << "gemm F32 " << tag << ": " << f32.summary() << " (" << tol.why << ")";
  }
}

// ---- softmax attention, written with Eigen matrices ----

// out = softmax(scale * q k^T, over the keys `sees` allows) v; a row that sees nothing is zero.
// With `unstable`, exp(s) is taken without subtracting the row max (the classic overflow).
template <class T>
RowMat<T> eigen_attention(const RowMat<T>& q, const RowMat<T>& k, const RowMat<T>& v, T scale,
                          const std::function<bool(int64_t, int64_t)>& sees, bool unstable = false) {
  const RowMat<T> s = (q * k.transpose()) * scale;
  RowMat<T> out = RowMat<T>::Zero(q.rows(), v.cols());
  for (int64_t i = 0; i < q.rows(); ++i) {
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < k.rows(); ++j)
      if (sees(i, j)) m = std::max(m, s(i, j));
    if (m == -std::numeric_limits<T>::infinity()) continue;
    if (unstable) m = 0;
    Eigen::Matrix<T, 1, Eigen::Dynamic> p(k.rows());
    for (int64_t j = 0; j < k.rows(); ++j) p(j) = sees(i, j) ? std::exp(s(i, j) - m) : T(0);
    out.row(i) = (p / p.sum()) * v;
  }
  return out;
}

enum class Mistake { None, CausalOffByOne, GqaModulo, NoMaxSubtraction };

// flash_attention through eigen_attention, one (batch, head) block at a time.
template <class T> std::vector<double> eigen_flash_attention(const FlashAttentionParams& p, const TensorMap& t, Mistake bug) {
  const int64_t hd = p.head_dim, rows = p.kv_seq_stride ? p.kv_seq_stride : p.kv_len;
  std::vector<double> out;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.num_heads; ++h) {
      const int64_t kv = bug == Mistake::GqaModulo ? h % p.num_kv_heads : h / (p.num_heads / p.num_kv_heads);
      const int64_t kv_at = (b * p.num_kv_heads + kv) * rows * hd;
      auto sees = [&](int64_t i, int64_t j) {
        const int64_t pos = p.pos_offset + i;
        const bool causal_ok = bug == Mistake::CausalOffByOne ? j < pos : j <= pos;
        return (!p.causal || causal_ok) && (p.sliding_window == 0 || pos - j < p.sliding_window);
      };
      const RowMat<T> o = eigen_attention<T>(block<T>(t.at("q"), (b * p.num_heads + h) * p.q_len * hd, p.q_len, hd),
                                             block<T>(t.at("k"), kv_at, p.kv_len, hd),
                                             block<T>(t.at("v"), kv_at, p.kv_len, hd), static_cast<T>(p.scale), sees,
                                             bug == Mistake::NoMaxSubtraction);
      out.insert(out.end(), o.data(), o.data() + o.size());
    }
  return out;
}

FlashAttentionParams fa(int64_t batch, int64_t q_len, int64_t kv_len, int64_t pos_offset, int64_t nh, int64_t nkv,
                        int64_t hd, bool causal, int64_t stride = 0, int64_t window = 0) {
  return {.batch = batch, .q_len = q_len, .kv_len = kv_len, .pos_offset = pos_offset, .num_heads = nh,
          .num_kv_heads = nkv, .head_dim = hd, .causal = causal, .scale = float(1 / std::sqrt(double(hd))),
          .kv_seq_stride = stride, .sliding_window = window};
}

TEST(ReferenceCrossCheck, FlashAttentionMatchesEigen) {
  const Op& op = op_or_throw("flash_attention");
  const FlashAttentionParams shapes[] = {
      fa(1, 9, 9, 0, 8, 2, 64, true),             // GQA 4, causal prefill
      fa(2, 5, 40, 35, 4, 1, 80, true, 48),       // all heads on one kv head, chunked, strided kv rows
      fa(1, 6, 32, 30, 2, 2, 32, true, 0, 4),     // window 4: the last queries see nothing
      fa(1, 4, 50, 10, 3, 3, 128, false, 0, 7),   // non-causal window
      fa(1, 12, 300, 288, 16, 2, 96, true),       // GQA 8, chunked prefill
      fa(2, 3, 20, 0, 2, 1, 256, false),          // non-causal, batch 2, hd 256
  };
  for (const auto& s : shapes) {
    const std::string tag = fmt::format("b{}_q{}_kv{}_pos{}_h{}_kv{}_hd{}_c{}_s{}_w{}", s.batch, s.q_len, s.kv_len,
                                        s.pos_offset, s.num_heads, s.num_kv_heads, s.head_dim, s.causal,
                                        s.kv_seq_stride, s.sliding_window);
    const Params p = Params::of(s);
    const TensorMap t = reference_case(op, p, tag);
    const Tensor& want = t.at("out");
    expect_same_to_the_f32_ulp(want, eigen_flash_attention<double>(s, t, Mistake::None), "double " + tag);

    const Tolerance tol = op.tolerance(p, DType::F32, t);
    const ErrorReport f32 = compare(want, f32_tensor(want.shape(), eigen_flash_attention<float>(s, t, Mistake::None)), tol);
    EXPECT_TRUE(f32.pass()) << "F32 " << tag << ": " << f32.summary() << " (" << tol.why << ")";
    if (s.causal) {
      const ErrorReport bad = compare(want, f32_tensor(want.shape(), eigen_flash_attention<float>(s, t, Mistake::CausalOffByOne)), tol);
      EXPECT_FALSE(bad.pass()) << "a causal mask off by one passed on " << tag;
    }
    if (s.num_kv_heads > 1 && s.num_heads > s.num_kv_heads) {
      const ErrorReport bad = compare(want, f32_tensor(want.shape(), eigen_flash_attention<float>(s, t, Mistake::GqaModulo)), tol);
      EXPECT_FALSE(bad.pass()) << "GQA by modulo passed on " << tag;
    }
  }
}

// Logits of magnitude 1e4: the reference stays finite and still matches Eigen in double.
TEST(ReferenceCrossCheck, FlashAttentionHugeLogitsStayFinite) {
  const Op& op = op_or_throw("flash_attention");
  FlashAttentionParams s = fa(1, 4, 64, 0, 2, 1, 64, false);
  s.scale = 400.0f;
  const TensorMap t = reference_case(op, Params::of(s), "huge");
  const RowMat<double> q = block<double>(t.at("q"), 0, 2 * 4, 64), k = block<double>(t.at("k"), 0, 64, 64);
  const double max_logit = ((q * k.transpose()) * double(s.scale)).cwiseAbs().maxCoeff();
  EXPECT_GT(max_logit, 5e3) << "the case should reach logits of order 1e4";
  for (int64_t i = 0; i < t.at("out").numel(); ++i) ASSERT_TRUE(std::isfinite(t.at("out").get(i))) << i;
  expect_same_to_the_f32_ulp(t.at("out"), eigen_flash_attention<double>(s, t, Mistake::None), "huge logits");
  const Tolerance tol = op.tolerance(Params::of(s), DType::F32, t);
  const Tensor& want = t.at("out");
  EXPECT_TRUE(compare(want, f32_tensor(want.shape(), eigen_flash_attention<float>(s, t, Mistake::None)), tol).pass());
  EXPECT_FALSE(compare(want, f32_tensor(want.shape(), eigen_flash_attention<float>(s, t, Mistake::NoMaxSubtraction)), tol).pass())
      << "a softmax without the max subtraction passed logits of 1e4";
}

// ---- MLA: attention with keys [c | k_rope] and values c ----

template <class T> std::vector<double> eigen_mla(const MlaAttentionParams& p, const TensorMap& t) {
  const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
  std::vector<double> out;
  for (int64_t b = 0; b < p.batch; ++b) {
    const RowMat<T> c = block<T>(t.at("kv_compressed"), b * p.kv_len * r, p.kv_len, r);
    RowMat<T> keys(p.kv_len, r + dr);
    keys << c, block<T>(t.at("kv_rope"), b * p.kv_len * dr, p.kv_len, dr);
    for (int64_t h = 0; h < p.num_heads; ++h) {
      const RowMat<T> q = block<T>(t.at("q"), (b * p.num_heads + h) * p.q_len * (r + dr), p.q_len, r + dr);
      const RowMat<T> o = eigen_attention<T>(q, keys, c, static_cast<T>(p.scale),
                                             [&](int64_t i, int64_t j) { return !p.causal || j <= p.pos_offset + i; });
      out.insert(out.end(), o.data(), o.data() + o.size());
    }
  }
  return out;
}

TEST(ReferenceCrossCheck, MlaAttentionMatchesEigen) {
  const Op& op = op_or_throw("mla_attention");
  const MlaAttentionParams shapes[] = {
      {.q_len = 1, .kv_len = 40, .pos_offset = 39, .num_heads = 4, .causal = true, .scale = 0.11f, .kv_lora_rank = 64, .qk_rope_head_dim = 16},
      {.batch = 2, .q_len = 6, .kv_len = 30, .pos_offset = 24, .num_heads = 3, .causal = true, .scale = 0.08f, .kv_lora_rank = 128, .qk_rope_head_dim = 32},
      {.q_len = 3, .kv_len = 17, .num_heads = 2, .scale = 0.07f, .kv_lora_rank = 512, .qk_rope_head_dim = 64},
  };
  for (const auto& s : shapes) {
    const std::string tag = fmt::format("b{}_q{}_kv{}_r{}_dr{}", s.batch, s.q_len, s.kv_len, s.kv_lora_rank, s.qk_rope_head_dim);
    const Params p = Params::of(s);
    const TensorMap t = reference_case(op, p, tag);
    expect_same_to_the_f32_ulp(t.at("out"), eigen_mla<double>(s, t), "mla double " + tag);
    const Tolerance tol = op.tolerance(p, DType::F32, t);
    const ErrorReport f32 = compare(t.at("out"), f32_tensor(t.at("out").shape(), eigen_mla<float>(s, t)), tol);
    EXPECT_TRUE(f32.pass()) << "mla F32 " << tag << ": " << f32.summary() << " (" << tol.why << ")";
  }
}

// ---- flash_attention_batched_per_cache: each item is a non-causal attention over its own rows ----

TEST(ReferenceCrossCheck, BatchedPerCacheMatchesEigen) {
  const Op& op = op_or_throw("flash_attention_batched_per_cache");
  const FlashAttentionBatchedPerCacheParams s{.nq = 8, .nkv = 2, .hd = 64, .scale = 0.125f, .capacity = 37, .m = 4};
  const TensorMap t = reference_case(op, Params::of(s), "m4");
  const auto lens = to_indices(t.at("kv_lens"));
  std::vector<double> got;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t h = 0; h < s.nq; ++h) {
      const int64_t at = (h / (s.nq / s.nkv)) * s.capacity * s.hd;
      const std::string idx = std::to_string(i);
      const RowMat<double> o = eigen_attention<double>(
          block<double>(t.at("q"), (i * s.nq + h) * s.hd, 1, s.hd), block<double>(t.at("k_caches." + idx), at, lens[i], s.hd),
          block<double>(t.at("v_caches." + idx), at, lens[i], s.hd), s.scale, [](int64_t, int64_t) { return true; });
      got.insert(got.end(), o.data(), o.data() + o.size());
    }
  EXPECT_EQ(lens.front(), 0) << "the generator should include an empty sequence";
  EXPECT_EQ(lens.back(), s.capacity) << "the generator should include a full sequence";
  expect_same_to_the_f32_ulp(t.at("out"), got, "batched_per_cache");
}

// ---- qk_norm_rope: RMS norm with Eigen, the rotation as a complex product ----

// y_i + i y_{i+half} = (a_i + i a_{i+half}) (cos + i sin), a the (normalised) head; T is double or float.
// With `gptj`, pairs (2i, 2i+1) instead (GPT-J RoPE): a classic mix-up the tolerance must catch.
template <class T>
std::vector<double> complex_rope(const QkNormRopeParams& s, const TensorMap& t, bool gptj = false) {
  const int64_t hd = s.head_dim, half = (s.rotary_dim ? s.rotary_dim : hd) / 2;
  const RowMat<T> w = block<T>(t.at("norm_w"), 0, 1, hd);
  std::vector<double> out(static_cast<size_t>(s.heads * s.tokens * hd));
  for (int64_t tok = 0; tok < s.tokens; ++tok)
    for (int64_t h = 0; h < s.heads; ++h) {
      RowMat<T> a = block<T>(t.at("input"), (tok * s.heads + h) * hd, 1, hd);
      if (s.mode == 1) a = (a / std::sqrt(a.squaredNorm() / T(hd) + T(s.eps))).cwiseProduct(w);
      const int64_t pos = s.pos_offset + tok;
      double* y = out.data() + (h * s.tokens + tok) * hd;
      for (int64_t i = 0; i < hd; ++i) y[i] = double(a(0, i));
      for (int64_t i = 0; i < half; ++i) {
        const int64_t re = gptj ? 2 * i : i, im = gptj ? 2 * i + 1 : i + half;
        const std::complex<T> z = std::complex<T>(a(0, re), a(0, im)) *
                                  std::complex<T>(T(t.at("cos").get(pos * half + i)), T(t.at("sin").get(pos * half + i)));
        y[re] = double(z.real());
        y[im] = double(z.imag());
      }
    }
  return out;
}

TEST(ReferenceCrossCheck, QkNormRopeMatchesComplexRotation) {
  const Op& op = op_or_throw("qk_norm_rope");
  const QkNormRopeParams shapes[] = {
      {.tokens = 5, .heads = 3, .head_dim = 128, .pos_offset = 7, .mode = 1, .max_pos = 16},
      {.tokens = 4, .heads = 2, .head_dim = 80, .pos_offset = 2, .mode = 2, .rotary_dim = 32, .max_pos = 6},
      {.tokens = 3, .heads = 2, .head_dim = 96, .pos_offset = 1, .eps = 1e-5f, .mode = 1, .rotary_dim = 48, .max_pos = 4},
  };
  for (const auto& s : shapes) {
    const std::string tag = fmt::format("hd{}_rot{}_mode{}", s.head_dim, s.rotary_dim, s.mode);
    const Params p = Params::of(s);
    const TensorMap t = reference_case(op, p, tag);
    const Tensor& want = t.at("output");
    expect_same_to_the_f32_ulp(want, complex_rope<double>(s, t), "qk_norm_rope " + tag);
    const Tolerance tol = op.tolerance(p, DType::F32, t);
    const ErrorReport f32 = compare(want, f32_tensor(want.shape(), complex_rope<float>(s, t)), tol);
    EXPECT_TRUE(f32.pass()) << "F32 " << tag << ": " << f32.summary() << " (" << tol.why << ")";
    EXPECT_FALSE(compare(want, f32_tensor(want.shape(), complex_rope<float>(s, t, true)), tol).pass())
        << "GPT-J pairing passed on " << tag;
  }
}

// The tables are cos / sin of p * 10000^(-2i / rotary_dim), rounded once to F32.
TEST(ReferenceCrossCheck, RopeTablesAreTheStandardFrequencies) {
  const Op& op = op_or_throw("qk_norm_rope");
  const QkNormRopeParams s{.tokens = 1, .heads = 1, .head_dim = 64, .mode = 2, .rotary_dim = 32, .max_pos = 50};
  const TensorMap t = reference_case(op, Params::of(s), "tables");
  std::vector<double> c, sn;
  for (int p = 0; p < 50; ++p)
    for (int i = 0; i < 16; ++i) {
      const double angle = p * std::pow(10000.0, -2.0 * i / 32.0);
      c.push_back(std::cos(angle));
      sn.push_back(std::sin(angle));
    }
  expect_same_to_the_f32_ulp(t.at("cos"), c, "cos table");
  expect_same_to_the_f32_ulp(t.at("sin"), sn, "sin table");
}

// ---- bad input: clear errors before any kernel runs ----

ParamMap fa_map(std::map<std::string, std::string> over) {
  ParamMap m{{"batch", "1"}, {"q_len", "1"}, {"kv_len", "8"}, {"pos_offset", "7"}, {"num_heads", "4"},
             {"num_kv_heads", "2"}, {"head_dim", "64"}, {"causal", "true"}, {"scale", "0.125"},
             {"kv_seq_stride", "0"}, {"sliding_window", "0"}};
  for (auto& [k, v] : over) m[k] = v;
  return m;
}

TEST(AttentionRopeValidation, BadParametersAndDataAreErrors) {
  const Op& fa_op = op_or_throw("flash_attention");
  EXPECT_NO_THROW(fa_op.parse(fa_map({})));
  expect_error([&] { fa_op.parse(fa_map({{"num_heads", "6"}, {"num_kv_heads", "4"}})); }, "not a multiple");
  expect_error([&] { fa_op.parse(fa_map({{"kv_seq_stride", "5"}})); }, "kv_seq_stride");
  expect_error([&] { fa_op.parse(fa_map({{"head_dim", "0"}})); }, "head_dim");

  // A position past the tables.
  const Op& rope_op = op_or_throw("qk_norm_rope");
  const QkNormRopeParams rp{.tokens = 4, .heads = 1, .head_dim = 64, .pos_offset = 5, .max_pos = 8};
  TensorMap rt = rope_op.make_case(Params::of(QkNormRopeParams{.tokens = 4, .heads = 1, .head_dim = 64, .max_pos = 8}),
                                   DType::F32, 1);
  expect_error([&] { rope_op.validate(Params::of(rp), rt); }, "max_pos");
  expect_error([&] { rope_op.parse({{"tokens", "1"}, {"heads", "1"}, {"head_dim", "64"}, {"pos_offset", "0"},
                                    {"eps", "1e-6"}, {"mode", "1"}, {"rotary_dim", "33"}}); },
               "rotary_dim");

  // A positions entry past the tables.
  const Op& item_op = op_or_throw("qk_norm_rope_batched_per_item");
  const Params ip = Params::of(QkNormRopeBatchedPerItemParams{.m = 3, .heads = 1, .head_dim = 64, .max_pos = 10});
  TensorMap it = item_op.make_case(ip, DType::F32, 2);
  it.at("positions").as<uint32_t>()[1] = 10;
  expect_error([&] { item_op.validate(ip, it); }, "positions[1]");

  // kv_lens past capacity, and a cache list that does not match q.
  const Op& bpc = op_or_throw("flash_attention_batched_per_cache");
  const Params bp = Params::of(FlashAttentionBatchedPerCacheParams{.nq = 2, .nkv = 1, .hd = 64, .capacity = 9, .m = 2});
  TensorMap bt = bpc.make_case(bp, DType::F32, 3);
  bt.at("kv_lens").as<uint32_t>()[0] = 10;
  expect_error([&] { bpc.validate(bp, bt); }, "kv_lens[0]");
  bt.erase("v_caches.1");
  expect_error([&] { bpc.parse({{"nq", "2"}, {"nkv", "1"}, {"hd", "64"}, {"scale", "0.125"}, {"capacity", "9"}}, &bt); },
               "v_caches.");

  // The cache rows must fit.
  const Op& cache_op = op_or_throw("split_qkv_norm_rope_into_cache");
  expect_error([&] {
    cache_op.parse({{"tokens", "4"}, {"q_heads", "2"}, {"kv_heads", "1"}, {"head_dim", "64"}, {"pos_offset", "0"},
                    {"eps", "1e-6"}, {"qk_mode", "1"}, {"cache_len", "6"}, {"cache_capacity", "8"}});
  }, "cache_capacity");
}

}  // namespace
}  // namespace ts
