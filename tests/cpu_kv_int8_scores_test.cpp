// kv_paged_decode_attention over an I8 pool on cpu scores its keys in int8 (cpu/attention/int8_scores.h): each
// query row quantized with its own scale, integer dots, the scales applied once per score. The case is
// judged by the route's own NMSE bound (derived from the query's quantum and the case's keys and
// values, printed with its derivation); a result off by more than that bound still fails; too few
// keys and a non-finite query keep the exact route under the op's tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "conformance/check.h"
#include "core/case_file.h"
#include "core/rng.h"
#include "core/ops/paged/pool.h"
#include "core/ops/paged_params.h"
#include "cpu/attention/int8_scores.h"

namespace ts {
namespace {

const CaseSpec& preset(const Op& op, const std::string& name) {
  for (const CaseSpec& c : op.cases())
    if (c.name == name) return c;
  for (const CaseSpec& c : op.benches())
    if (c.name == name) return c;
  throw Error("no preset " + name);
}

Case kv_case(const std::string& name, DType dt = DType::F32) {
  const Op& op = op_or_throw("kv_paged_decode_attention");
  return generate_case(op, preset(op, name).params, dt, 5);
}

// The output of the case run on cpu, judged under the tolerance the matrix would use.
Verdict judged(const Case& c) { return check_case(backend("cpu"), c, false); }

// The query quantizer's codes are round-half-to-even of q / d, d = max|q| / 127, within +-127, zero
// padded: random rows of every length to 130 (the vectorised loop's 8 lanes and its tail), and rows
// built to land on ties (q = (k + 0.5) d) and on the largest code.
TEST(CpuKvInt8Scores, QueryCodesRoundHalfToEven) {
  Rng rng(3);
  std::vector<float> q(130);
  std::vector<int8_t> codes(192);
  auto expect_codes = [&](int64_t n) {
    const float d = cpu::quantize_query(q.data(), n, codes.data(), 192);
    float amax = 0;
    for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(q[i]));
    ASSERT_EQ(d, amax / 127.0f);
    const float inv = amax > 0 ? 127.0f / amax : 0.0f;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(codes[i], static_cast<int8_t>(std::clamp(std::nearbyint(q[i] * inv), -127.0f, 127.0f)))
          << "n=" << n << " q[" << i << "]=" << q[i];
    for (int64_t i = n; i < 192; ++i) ASSERT_EQ(codes[i], 0);
  };
  for (int64_t n = 1; n <= 130; ++n) {
    for (int64_t i = 0; i < n; ++i) q[i] = static_cast<float>(rng.normal());
    expect_codes(n);
  }
  for (int64_t i = 0; i < 130; ++i) q[i] = (static_cast<float>(i % 40) - 20.0f + 0.5f);  // ties of q / d = q
  q[0] = 127.0f;  // d = 1: every other code is a tie
  expect_codes(130);
  std::fill(q.begin(), q.end(), 0.0f);
  expect_codes(64);
}

// GQA groups of 4 (two kv heads of 128) with 33 keys, one group of 1 over 256 with 64, and a
// Llama-3-8B decode of 1024 keys: each passes under the int8 bound, and the route ran (its NMSE is
// that of a quantized query, far above the exact route's F32 rounding).
TEST(CpuKvInt8Scores, DecodesPassUnderTheDerivedBound) {
  if (!cpu::int8_scores_available()) GTEST_SKIP() << "no AVX-512 VNNI here: the exact route runs";
  for (const char* name : {"I8_gqa4_hd128_bs16_len33", "I8_gqa1_hd256_bs32_len64", "llama3_8b_ctx1024_I8"})
    for (DType dt : {DType::F32, DType::BF16}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(dtype_name(dt)));
      const Case c = kv_case(name, dt);
      const Verdict v = judged(c);
      ASSERT_TRUE(v.pass) << v.describe(true);
      const Tolerance& t = v.outputs[0].tolerance;
      EXPECT_EQ(t.metric, Metric::Nmse);
      EXPECT_NE(t.why.find("quantized to int8"), std::string::npos) << t.str();
      EXPECT_NE(t.why.find("degrees of freedom"), std::string::npos) << t.str();
      if (dt == DType::F32) {
        EXPECT_GT(v.outputs[0].report.nmse, 1e-9) << v.describe(true);
      }
    }
}

// Shapes off the kernel's steps: head_dim 96 and 40 (a masked tail of the 64-byte step), groups of
// 2 and 3 query heads (the kernel's 4 rows repeating one), key counts that leave 1 to 3 keys over a
// step of 4, blocks of 8 and 1.
TEST(CpuKvInt8Scores, ShapesOffTheKernelsStepsPass) {
  if (!cpu::int8_scores_available()) GTEST_SKIP() << "no AVX-512 VNNI here: the exact route runs";
  const Op& op = op_or_throw("kv_paged_decode_attention");
  struct Shape { int64_t nq, nkv, hd, bs, len; };
  for (const Shape& s : {Shape{6, 3, 96, 8, 70}, Shape{9, 3, 40, 1, 33}, Shape{4, 1, 128, 16, 131}}) {
    KvPagedDecodeParams p{.kv_dtype = KvDtype::I8, .num_q_heads = s.nq, .num_kv_heads = s.nkv, .head_dim = s.hd,
                          .valid_kv_len = s.len, .block_size = s.bs,
                          .scale = static_cast<float>(1 / std::sqrt(static_cast<double>(s.hd)))};
    p.num_table = (s.len + s.bs - 1) / s.bs + 1;
    p.num_blocks = paged::blocks_needed({s.len}, s.bs, 2);
    SCOPED_TRACE(fmt::format("nq={} nkv={} hd={} bs={} len={}", s.nq, s.nkv, s.hd, s.bs, s.len));
    const Case c = generate_case(op, Params::of(p), DType::F32, 9);
    const Verdict v = judged(c);
    EXPECT_TRUE(v.pass) << v.describe(true);
    EXPECT_EQ(v.outputs[0].tolerance.metric, Metric::Nmse);
    EXPECT_GT(v.outputs[0].report.nmse, 1e-9) << v.describe(true);
  }
}

// The kernel's scores, bit for bit: factor[r] x key scale x the exact int32 dot, for every row count
// (1 to 4: fewer repeat a row and store only theirs), key counts around its steps of four (a short last
// step repeats its last key), head sizes in one, two and more column steps with and without a partial
// last step, and codes at both ends of the byte (a pool may hold -128).
TEST(CpuKvInt8Scores, TheKernelsScoresAreTheExactDotsScaled) {
  if (!cpu::int8_scores_available()) GTEST_SKIP() << "no AVX-512 VNNI here: the exact route runs";
  Rng rng(11);
  for (int64_t dk : {16, 64, 100, 128, 160, 256, 264}) {
    const int64_t padded = (dk + cpu::kInt8ScoreStep - 1) / cpu::kInt8ScoreStep * cpu::kInt8ScoreStep;
    for (int rows = 1; rows <= 4; ++rows)
      for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 13}) {
        SCOPED_TRACE(fmt::format("dk={} rows={} keys={}", dk, rows, n));
        std::vector<std::vector<int8_t>> qc(4, std::vector<int8_t>(static_cast<size_t>(padded), 0));
        cpu::Int8QueryGroup g;
        g.rows = rows;
        for (int r = 0; r < 4; ++r) {
          int32_t sum = 0;
          for (int64_t i = 0; i < dk; ++i) {
            const auto c = static_cast<int8_t>(static_cast<int64_t>(rng.below(255)) - 127);  // -127 .. 127
            qc[static_cast<size_t>(r)][static_cast<size_t>(i)] = c;
            sum += c;
          }
          g.codes[r] = qc[static_cast<size_t>(r)].data();
          g.bias[r] = 128 * sum;
          g.factor[r] = 0.01f * static_cast<float>(r + 1) + 1e-3f * static_cast<float>(rng.below(100));
        }
        std::vector<std::vector<int8_t>> keys(static_cast<size_t>(n), std::vector<int8_t>(static_cast<size_t>(dk)));
        std::vector<const int8_t*> krow;
        std::vector<float> ks;
        for (auto& k : keys) {
          for (auto& c : k) c = static_cast<int8_t>(static_cast<int64_t>(rng.below(256)) - 128);  // -128 .. 127
          k[0] = -128;
          krow.push_back(k.data());
          ks.push_back(0.5f + 1e-3f * static_cast<float>(rng.below(1000)));
        }
        const int64_t ld = 16;
        std::vector<float> s(static_cast<size_t>(4 * ld), -7.0f);  // -7: not written
        cpu::score_int8_keys(g, krow.data(), ks.data(), n, dk, s.data(), ld, cpu::Int8KeyPrefetch{});
        for (int r = 0; r < 4; ++r)
          for (int64_t j = 0; j < ld; ++j) {
            float want = -7.0f;
            if (r < rows && j < n) {
              int32_t dot = 0;
              for (int64_t i = 0; i < dk; ++i) dot += qc[static_cast<size_t>(r)][static_cast<size_t>(i)] * keys[static_cast<size_t>(j)][static_cast<size_t>(i)];
              want = static_cast<float>(dot) * g.factor[r] * ks[static_cast<size_t>(j)];
            }
            EXPECT_EQ(s[static_cast<size_t>(r * ld + j)], want) << "row " << r << " key " << j;
          }
      }
  }
}

// Every value scale 1 + eps too large in what the backend is given (the expectation keeps the
// original pool): the output is then (1 + eps) x its own, an NMSE of eps^2 from that alone. With
// eps^2 four times the bound the case fails; the bound does not move (it scales with |v|^2 as the
// outputs' energy does).
TEST(CpuKvInt8Scores, AnErrorAboveTheBoundFails) {
  for (const char* name : {"I8_gqa4_hd128_bs16_len33", "llama3_8b_ctx1024_I8"}) {
    SCOPED_TRACE(name);
    const Case c = kv_case(name);
    const std::optional<Tolerance> t = backend("cpu").tolerance(c, "output", c.tensors);
    ASSERT_TRUE(t.has_value());
    const double eps = 2 * std::sqrt(t->max_nmse);
    Case wrong = c;
    Tensor& vs = wrong.tensors.at("layer_v_scales");
    for (int64_t i = 0; i < vs.numel(); ++i) vs.as<float>()[i] *= static_cast<float>(1 + eps);
    const std::optional<Tolerance> tw = backend("cpu").tolerance(wrong, "output", wrong.tensors);
    ASSERT_TRUE(tw.has_value());
    EXPECT_NEAR(tw->max_nmse, t->max_nmse, 1e-3 * t->max_nmse);
    const Verdict v = judged(wrong);
    EXPECT_FALSE(v.pass) << v.describe(true);
    EXPECT_GT(v.outputs[0].report.nmse, t->max_nmse);
  }
}

// The exact route and the op's own tolerance: too few keys for the route (9 < kInt8ScoreMinKeys), a
// query holding a NaN or an Inf, and the other pool dtypes.
TEST(CpuKvInt8Scores, ShortContextsAndNonFiniteQueriesKeepTheExactRoute) {
  const Case few = kv_case("I8_gqa8_hd64_bs1_len9");
  EXPECT_FALSE(backend("cpu").tolerance(few, "output", few.tensors).has_value());
  EXPECT_TRUE(judged(few).pass);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    Case c = kv_case("I8_gqa1_hd256_bs32_len64");
    c.tensors.at("q").as<float>()[3] = bad;
    c.expected.clear();
    fill_expected(c);
    EXPECT_FALSE(backend("cpu").tolerance(c, "output", c.tensors).has_value());
    const Verdict v = judged(c);
    EXPECT_TRUE(v.pass) << v.describe(true);
  }
  for (const char* name : {"F16_gqa1_hd256_bs32_len64", "F8_E4M3_gqa1_hd256_bs32_len64"}) {
    const Case c = kv_case(name);
    EXPECT_FALSE(backend("cpu").tolerance(c, "output", c.tensors).has_value()) << name;
  }
}

// A non-finite key or value scale anywhere the decode reads, in a full block or in the last, partial
// one, keeps the exact route: the route's bound is over finite rows. The kernel finds it as it copies
// that tile's scales and runs the whole decode again on the exact route, so every case is judged under
// the op's tolerance, which the other kv heads' rows meet only if they were not scored in int8; the
// rows that see the scale come out NaN, as the reference's (a NaN scale is what kv_append_paged stores
// for a row with a NaN or an Inf).
TEST(CpuKvInt8Scores, NonFiniteScalesKeepTheExactRoute) {
  const Case base = kv_case("I8_gqa4_hd128_bs16_len33");
  ASSERT_TRUE(backend("cpu").tolerance(base, "output", base.tensors).has_value());
  struct Where {
    const char* scales;
    int64_t key;
    float value;
  };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const Where w : {Where{"layer_k_scales", 5, inf}, Where{"layer_v_scales", 20, nan}, Where{"layer_k_scales", 32, nan},
                        Where{"layer_v_scales", 32, -inf}}) {
    SCOPED_TRACE(fmt::format("{} of key {}", w.scales, w.key));
    Case c = kv_case("I8_gqa4_hd128_bs16_len33");
    const auto& p = c.params.as<KvPagedDecodeParams>();
    const uint32_t* table = c.tensors.at("block_table").as<uint32_t>();
    const int64_t at = (static_cast<int64_t>(table[w.key / p.block_size]) * p.num_kv_heads + p.num_kv_heads - 1) * p.block_size +
                       w.key % p.block_size;
    c.tensors.at(w.scales).as<float>()[at] = w.value;
    c.expected.clear();
    fill_expected(c);
    EXPECT_FALSE(backend("cpu").tolerance(c, "output", c.tensors).has_value());
    const Verdict v = judged(c);
    EXPECT_TRUE(v.pass) << v.describe(true);
  }
}

}  // namespace
}  // namespace ts
