// NaN and Inf in every float input of every op of every family, on every backend (beside the core
// family's denser grids of tests/special_values_test.cpp and the attention NaN tests): each op's
// first smoke case with F32 activations, a NaN, a +Inf and a -Inf written into every float input and
// in-out (activations, weights, scales, tables, routing weights, pools), the expected outputs from
// the reference. The judge requires NaN and Inf exactly where the reference has them and every other
// value within the op's tolerance, so a backend that turns a special value into a finite one (or the
// reverse) fails. The semantics are docs/catalog.md's "Special values"; no backend is excepted.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/paged_params.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

// NaN, +Inf, -Inf at the first, middle and last element of every float input, so a row, a block and
// a lane at a vector's tail each see one.
void add_specials(Tensor& t) {
  const int64_t n = t.numel();
  if (n == 0) return;
  const double v[3] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()};
  const int64_t at[3] = {0, n / 2, n - 1};
  for (int i = 0; i < 3; ++i) t.set(at[i], v[i]);
}

Case special_case(const Op& op, const CaseSpec& spec) {
  Case c = generate_case(op, spec.params, DType::F32, 11);
  for (const TensorDecl& d : c.decls)
    if (d.role != Role::Out && is_float(d.dtype)) add_specials(c.tensors.at(d.name));
  TensorMap want = working_set(c);
  execute_case(backend("reference"), c, want);
  for (auto& [name, t] : c.expected) t = want.at(name);
  return c;
}

class FamilySpecialValues : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilySpecialValues, NaNAndInfInEveryFloatInput) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable here";
  int judged = 0;
  for (const Op* op : all_ops()) {
    const CaseSpec* spec = nullptr;
    for (const CaseSpec& c : op->cases())
      if (c.tier == Tier::Smoke && std::find(c.dtypes.begin(), c.dtypes.end(), DType::F32) != c.dtypes.end()) {
        spec = &c;
        break;
      }
    EXPECT_NE(spec, nullptr) << op->name() << " has no smoke case with F32 activations";
    if (!spec) continue;
    const Case c = special_case(*op, *spec);
    if (!b->supports(c).ok) continue;
    const Verdict v = check_case(*b, c, false);
    if (!v.unsupported.empty()) continue;
    ++judged;
    EXPECT_TRUE(v.pass) << GetParam() << " " << op->name() << " " << spec->name << "\n" << v.describe();
  }
  EXPECT_GT(judged, 0);
}

// GPTQ / AWQ with an infinite scale: the reference's W = s * (q - z) is NaN wherever q == z and +-Inf
// elsewhere, so the output column is NaN. The cpu once scaled each run's sum (s * (sum a q - z sum a)),
// which gave Inf. Every case of both ops (decode through the int8 tiles, a few outputs, prefill).
TEST_P(FamilySpecialValues, GptqAwqInfiniteScale) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable here";
  int judged = 0;
  for (const char* name : {"gemm_gptq", "gemm_awq"}) {
    const Op& op = op_or_throw(name);
    for (const CaseSpec& spec : op.cases()) {
      if (std::find(spec.dtypes.begin(), spec.dtypes.end(), DType::F32) == spec.dtypes.end()) continue;
      Case c = generate_case(op, spec.params, DType::F32, 11);
      Tensor& scales = c.tensors.at("scales");
      const int64_t n = scales.shape().back();
      for (int64_t g = 0; g < scales.shape()[0]; ++g) scales.set(g * n, std::numeric_limits<double>::infinity());
      TensorMap want = working_set(c);
      execute_case(backend("reference"), c, want);
      for (auto& [out, t] : c.expected) t = want.at(out);
      ASSERT_TRUE(std::isnan(c.expected.at("out").get(0))) << name << " " << spec.name << ": no q == z in column 0";
      if (!b->supports(c).ok) continue;
      ++judged;
      const Verdict v = check_case(*b, c, false);
      EXPECT_TRUE(v.pass) << GetParam() << " " << name << " " << spec.name << "\n" << v.describe();
    }
  }
  EXPECT_GT(judged, 0);
}

// A quantized KV pool with an infinite key scale (a pool built by hand: kv_append_paged stores a NaN
// scale for a non-finite row): the reference's key row is `code x +-Inf`, NaN where a code is 0, and
// the score sums the products, NaN where they differ in sign, so every query row of that kv head is
// NaN. A kernel that folds the scale into the score (`dot x Inf`, or partial dots times Inf) gives
// +-Inf where its sums share a sign, and a -Inf score is a masked key: a finite row. Every I8 and
// F8_E4M3 case, one key of each kv head:
// - even heads: -Inf, codes the signs of the group's first query (every product > 0, every partial
//   dot too) but for a single 0 code: the folded score is -Inf there, for certain (alone in its head:
//   a NaN score beside it would make the row NaN whatever this one gave);
// - odd heads: +Inf over its codes as generated (products of both signs).
TEST_P(FamilySpecialValues, KvPoolInfiniteKeyScale) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable here";
  constexpr double kInf = std::numeric_limits<double>::infinity();
  int judged = 0;
  const Op& op = op_or_throw("kv_paged_decode_attention");
  for (const CaseSpec& spec : op.cases()) {
    const auto& sp = spec.params.as<KvPagedDecodeParams>();
    if (sp.kv_dtype != KvDtype::I8 && sp.kv_dtype != KvDtype::F8_E4M3) continue;
    if (sp.valid_kv_len == 0 || std::find(spec.dtypes.begin(), spec.dtypes.end(), DType::F32) == spec.dtypes.end()) continue;
    Case c = generate_case(op, spec.params, DType::F32, 11);
    const auto& p = c.params.as<KvPagedDecodeParams>();
    const int64_t len = p.valid_kv_len, hd = p.head_dim, group = p.num_q_heads / p.num_kv_heads;
    const uint32_t* table = c.tensors.at("block_table").as<uint32_t>();
    const Tensor& q = c.tensors.at("q");
    Tensor& codes = c.tensors.at("layer_k");
    Tensor& scales = c.tensors.at("layer_k_scales");
    // Slot (block, kv head h, position in the block) of key j: its scale's index; its row is hd codes on.
    auto slot = [&](int64_t j, int64_t h) {
      return (static_cast<int64_t>(table[j / p.block_size]) * p.num_kv_heads + h) * p.block_size + j % p.block_size;
    };
    for (int64_t h = 0; h < p.num_kv_heads; ++h) {
      const int64_t key = ((len - 1 - 5 * h) % len + len) % len;
      if (h % 2) {
        scales.set(slot(key, h), kInf);
        continue;
      }
      const int64_t row = slot(key, h) * hd, first_query = h * group * hd;
      for (int64_t e = 0; e < hd; ++e) codes.set(row + e, q.get(first_query + e) < 0 ? -1.0 : 1.0);
      codes.set(row + (h * 7) % hd, 0.0);
      scales.set(slot(key, h), -kInf);
    }
    TensorMap want = working_set(c);
    execute_case(backend("reference"), c, want);
    for (auto& [out, t] : c.expected) t = want.at(out);
    const Tensor& o = c.expected.at("output");
    for (int64_t qh = 0; qh < p.num_q_heads; ++qh)
      ASSERT_TRUE(std::isnan(o.get(qh * hd))) << spec.name << ": query head " << qh << " is not NaN in the reference";
    if (!b->supports(c).ok) continue;
    ++judged;
    const Verdict v = check_case(*b, c, false);
    EXPECT_TRUE(v.pass) << GetParam() << " " << spec.name << "\n" << v.describe();
  }
  EXPECT_GT(judged, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, FamilySpecialValues, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
