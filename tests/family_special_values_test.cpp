// NaN and Inf in every float input of every op of the quant, moe, paged and kv families, on every
// backend, as the core family's special-value tests do for its elementwise ops: each op's smallest
// smoke case (F32 activations) with a NaN, a +Inf and a -Inf written into every float input and
// in-out (activations, scales, routing weights, pools), the expected outputs from the reference. The
// judge requires NaN and Inf exactly where the reference has them and every other value within the
// op's tolerance, so a backend that turns a special value into a finite one (or the reverse) fails.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
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

// Where a backend and the reference part ways today: what these ops do with a special value is not
// yet defined in the catalog (the kv pools' non-finite rows are: docs/catalog.md, family kv). Listed as data,
// as conformance/known_failures.cpp lists its cases: a listed pair that passes fails the test, so the
// list never outlives the fix.
struct Disagreement {
  const char* backend;
  const char* op;
  const char* symptom;
};
constexpr const char* kMoeInt8 = "an Inf the reference keeps comes out NaN (the int8 activation path of the GGUF experts)";
constexpr const char* kSoftmax =
    "a NaN the reference's softmax gives (an Inf score from an Inf in q or a key) comes out finite";
const std::vector<Disagreement> kDisagreements = {
    {"cpu", "gemv_quant_moe_id_offset", kMoeInt8},
    {"cpu", "gemv_quant_moe_id_batched", kMoeInt8},
    {"cpu", "gemv_quant_moe_id_gate_up_silu_batched", kMoeInt8},
    {"cpu", "gemm_quant_moe_id", kMoeInt8},
    {"cpu", "gemm_quant_moe_id_indirect", kMoeInt8},
    {"cpu", "paged_decode_attention", kSoftmax},
    {"cpu", "paged_decode_attention_v2", kSoftmax},
    {"cpu", "paged_varlen_attention", kSoftmax},
    {"cpu", "paged_varlen_attention_vllm", kSoftmax},
    {"cpu", "paged_varlen_attention_vllm_layout", kSoftmax},
    {"cpu", "paged_varlen_attention_vllm_tiled_q4", kSoftmax},
    {"cpu", "paged_varlen_attention_fa2_ffi", kSoftmax},
    {"cpu", "paged_batched_decode_attention", kSoftmax},
    {"cpu", "kv_paged_decode_attention", kSoftmax},
    {"opencl", "paged_decode_attention", kSoftmax},
    {"opencl", "paged_decode_attention_v2", kSoftmax},
    {"opencl", "paged_varlen_attention_vllm_layout", kSoftmax},
    {"opencl", "paged_batched_decode_attention", kSoftmax},
    {"vulkan", "paged_decode_attention", kSoftmax},
    {"vulkan", "paged_decode_attention_v2", kSoftmax},
    {"vulkan", "paged_varlen_attention", kSoftmax},
    {"vulkan", "paged_varlen_attention_vllm", kSoftmax},
    {"vulkan", "paged_varlen_attention_vllm_layout", kSoftmax},
    {"vulkan", "paged_varlen_attention_vllm_tiled_q4", kSoftmax},
    {"vulkan", "paged_varlen_attention_fa2_ffi", kSoftmax},
    {"vulkan", "paged_batched_decode_attention", kSoftmax},
};

const Disagreement* disagreement(const std::string& backend, const std::string& op) {
  for (const Disagreement& d : kDisagreements)
    if (backend == d.backend && op == d.op) return &d;
  return nullptr;
}

class FamilySpecialValues : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilySpecialValues, NaNAndInfInEveryFloatInput) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable here";
  int judged = 0;
  for (const Op* op : all_ops()) {
    if (op->family() == "core") continue;  // tests/special_values_test.cpp and the attention NaN tests
    const CaseSpec* spec = nullptr;
    for (const CaseSpec& c : op->cases())
      if (c.tier == Tier::Smoke && std::find(c.dtypes.begin(), c.dtypes.end(), DType::F32) != c.dtypes.end()) {
        spec = &c;
        break;
      }
    if (!spec) continue;
    const Case c = special_case(*op, *spec);
    if (!b->supports(c).ok) continue;
    const Verdict v = check_case(*b, c, false);
    if (!v.unsupported.empty()) continue;
    ++judged;
    if (const Disagreement* d = disagreement(GetParam(), op->name())) {
      EXPECT_FALSE(v.pass) << GetParam() << " " << op->name() << " now agrees with the reference (" << d->symptom
                           << "): remove it from kDisagreements";
      continue;
    }
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

INSTANTIATE_TEST_SUITE_P(Backends, FamilySpecialValues, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
