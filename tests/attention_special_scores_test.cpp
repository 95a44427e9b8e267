// Infinite scores in softmax attention, as docs/catalog.md "Special values" defines them, on every
// backend: a row whose every score is -Inf has only masked keys and outputs zeros (as a row with no
// visible key); a +Inf score makes its row NaN (exp(Inf - Inf)), as does a NaN score (-Inf x 0); a
// -Inf score among finite ones weighs 0. Short (40 keys) and long (1100 keys: more than one key-split
// piece on the backends that split) rows, so that the merge of partial states is held to it too.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/core_params.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

constexpr int64_t kHd = 64;
enum Row { AllMasked, PlusInf, NaNScore, OneMasked, kRows };

// One query row per head, each head its own kv head, so each row isolates one effect by its q[0] and
// element 0 of its keys (positive, 1 to 7, unless set below); the other elements are finite.
Case special_case(int64_t kv_len) {
  FlashAttentionParams p;
  p.q_len = 1;
  p.kv_len = kv_len;
  p.num_heads = kRows;
  p.num_kv_heads = kRows;
  p.head_dim = kHd;
  const Op& op = op_or_throw("flash_attention");
  Case c = generate_case(op, Params::of(p), DType::F32, 3);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor &q = c.tensors.at("q"), &k = c.tensors.at("k");
  for (int64_t h = 0; h < kRows; ++h) {
    for (int64_t d = 0; d < kHd; ++d) q.set(h * kHd + d, d == 0 ? 0.0 : 0.25);
    for (int64_t j = 0; j < kv_len; ++j) k.set((h * kv_len + j) * kHd, 1.0 + static_cast<double>(j % 7));
  }
  q.set(AllMasked * kHd, -inf);  // -Inf x k[0] > 0: every score -Inf
  q.set(PlusInf * kHd, inf);     // every score +Inf
  q.set(NaNScore * kHd, -inf);
  k.set((NaNScore * kv_len + 2) * kHd, 0.0);  // key 2: -Inf x 0 = NaN, the others -Inf
  q.set(OneMasked * kHd, 1.0);
  k.set((OneMasked * kv_len + 4) * kHd, -inf);  // key 4 alone scores -Inf among finite ones
  TensorMap want = working_set(c);
  execute_case(backend("reference"), c, want);
  c.expected["out"] = want.at("out");
  return c;
}

TEST(AttentionSpecialScores, TheReferenceSaysWhatTheCatalogSays) {
  for (int64_t kv_len : {40, 1100}) {
    const Case c = special_case(kv_len);
    const Tensor& out = c.expected.at("out");
    for (int64_t d = 0; d < kHd; ++d) {
      EXPECT_EQ(out.get(AllMasked * kHd + d), 0.0) << kv_len << " " << d;
      EXPECT_TRUE(std::isnan(out.get(PlusInf * kHd + d))) << kv_len << " " << d;
      EXPECT_TRUE(std::isnan(out.get(NaNScore * kHd + d))) << kv_len << " " << d;
      EXPECT_TRUE(std::isfinite(out.get(OneMasked * kHd + d))) << kv_len << " " << d;
    }
  }
}

class AttentionSpecialScoresOn : public ::testing::TestWithParam<std::string> {};

TEST_P(AttentionSpecialScoresOn, EveryBackendAgrees) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable here";
  for (int64_t kv_len : {40, 1100}) {
    const Case c = special_case(kv_len);
    if (!b->supports(c).ok) continue;
    const Verdict v = check_case(*b, c, false);
    EXPECT_TRUE(v.pass) << GetParam() << " kv_len " << kv_len << "\n" << v.describe(true);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AttentionSpecialScoresOn, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
