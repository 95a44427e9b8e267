// A NaN that a query row sees reaches that row's output on every backend, exactly where the
// reference puts it: a NaN key score makes every softmax weight of the row NaN (the reference's
// exp(s - max) sums it in), a NaN value element only that output column, a NaN query element the whole
// row. A kernel that lets a NaN score weigh zero (an exp that maps NaN to 0, a merge of key-split
// partial states that skips a state whose sum is not > 0) turns a poisoned input into a plausible
// finite answer, which is what this catches. Rows that see no NaN stay finite and match.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/core_params.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

// 4 query heads over 2 kv heads, one decode row over 1100 keys: more than one key-split piece on the
// backends that split long contexts, so the merge of partial states is part of what is checked.
FlashAttentionParams params() {
  FlashAttentionParams p;
  p.q_len = 1;
  p.kv_len = 1100;
  p.num_heads = 4;
  p.num_kv_heads = 2;
  p.head_dim = 64;
  p.scale = 0.125f;
  return p;
}

enum class Poison { KeyElement, ValueElement, QueryElement };

TensorMap inputs(const Op& op, const FlashAttentionParams& p, Poison where) {
  TensorMap io = allocate_from_decls(op.tensors(Params::of(p), DType::F32));
  for (const char* name : {"q", "k", "v"}) {
    Tensor& t = io.at(name);
    float* x = t.as<float>();
    for (int64_t i = 0; i < t.numel(); ++i) x[i] = 0.5f * std::sin(0.37f * static_cast<float>(i) + name[0]);
  }
  const float nan = std::nanf("");
  const int64_t hd = p.head_dim, S = p.kv_len;
  switch (where) {
    case Poison::KeyElement: io.at("k").as<float>()[(0 * S + 700) * hd + 5] = nan; break;  // kv head 0, key 700
    case Poison::ValueElement: io.at("v").as<float>()[(1 * S + 3) * hd + 9] = nan; break;  // kv head 1, key 3
    case Poison::QueryElement: io.at("q").as<float>()[3 * hd + 17] = nan; break;           // head 3
  }
  return io;
}

class AttentionNaNOn : public ::testing::TestWithParam<std::string> {};

TEST_P(AttentionNaNOn, ASeenNaNReachesTheOutputWhereTheReferencePutsIt) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable";
  Backend* ref = test::available_backend("reference");
  ASSERT_NE(ref, nullptr);
  const FlashAttentionParams p = params();
  const Op& op = op_or_throw("flash_attention");
  if (const Support s = b->supports(make_problem(op, Params::of(p), DType::F32)); !s.ok) GTEST_SKIP() << s.reason;
  for (const Poison where : {Poison::KeyElement, Poison::ValueElement, Poison::QueryElement}) {
    TensorMap want = inputs(op, p, where), got = inputs(op, p, where);
    run_case(*ref, op, Params::of(p), want);
    run_case(*b, op, Params::of(p), got);
    const float* w = want.at("out").as<float>();
    const float* g = got.at("out").as<float>();
    int64_t nans = 0;
    for (int64_t i = 0; i < want.at("out").numel(); ++i) {
      nans += std::isnan(w[i]);
      ASSERT_EQ(std::isnan(g[i]), std::isnan(w[i])) << "poison " << static_cast<int>(where) << ", out[" << i << "] = " << g[i]
                                                   << ", the reference's " << w[i];
      if (!std::isnan(w[i])) EXPECT_NEAR(g[i], w[i], 1e-4) << "out[" << i << "]";
    }
    // The cases mean what they say: the reference's NaNs are two whole rows, two columns, one row.
    const int64_t hd = p.head_dim;
    EXPECT_EQ(nans, where == Poison::KeyElement ? 2 * hd : where == Poison::ValueElement ? 2 : hd);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AttentionNaNOn, ::testing::Values("reference", "cpu", "opencl", "vulkan"));

}  // namespace
}  // namespace ts
