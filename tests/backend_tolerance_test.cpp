// A backend's own tolerance (Backend::tolerance): cpu's GGUF GEMV and GEMM and Vulkan's decode GEMV
// quantize their activations to int8 and are judged by the NMSE bound derived from that quantum
// (core/quant/int8_route.h); check_case applies it to those cases only, the bound still catches real
// mistakes, and every other backend and case keeps the op's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <limits>
#include <vector>

#include "conformance/check.h"
#include "core/case_file.h"
#include "core/ops/quant_params.h"

namespace ts {
namespace {

Case gemv_case(QuantKind kind, int64_t m, int64_t n_rows) {
  return generate_case(op_or_throw("gemm_quant"), Params::of(GemmQuantParams{kind, m, n_rows, 768}), DType::F32, 7);
}

// Whether this process asked for Vulkan's int8 decode GEMV (ctest's unit/vulkan/int8-route does).
bool vulkan_int8_asked() {
  const char* env = std::getenv("TOUCHSTONE_VULKAN_GEMV_ROUTE");
  return env && std::string(env) == "int8";
}

// The backends whose GGUF products quantize their activations: cpu (decode and prefill) and Vulkan
// (its decode GEMV under TOUCHSTONE_VULKAN_GEMV_ROUTE=int8, on a device with packed integer dot
// products: lavapipe has them). A backend not built or without the route skips, saying why.
class Int8Route : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Backend* b = find_backend(GetParam());
    if (!b) GTEST_SKIP() << "no " << GetParam() << " backend in this build";
    const Availability a = b->availability();
    if (!a.ok) GTEST_SKIP() << GetParam() << " unavailable: " << a.detail;
    if (GetParam() == "vulkan") {
      if (!vulkan_int8_asked())
        GTEST_SKIP() << "Vulkan's decode GEMV takes its F32 route unless TOUCHSTONE_VULKAN_GEMV_ROUTE=int8 "
                        "(ctest unit/vulkan/int8-route)";
      if (a.detail.find("int8 dot products") == std::string::npos)
        GTEST_SKIP() << "this Vulkan device has no packed integer dot products: " << a.detail;
      // Asked for and possible: the route must be the one the backend states.
      ASSERT_NE(a.detail.find("int8 activations"), std::string::npos) << a.detail;
    }
    be = b;
  }
  // The activation rows the backend quantizes: cpu any m, Vulkan the decode (m = 1).
  std::vector<int64_t> quantized_rows() const {
    return GetParam() == "cpu" ? std::vector<int64_t>{1, 2, 3, 4, 8, 11} : std::vector<int64_t>{1};
  }
  Backend* be = nullptr;
};

TEST_P(Int8Route, CheckCaseAppliesTheBackendsOwnBound) {
  const Case c = gemv_case(QuantKind::Q4_K, 1, 128);
  const Verdict v = check_case(*be, c, false);
  ASSERT_TRUE(v.pass) << v.describe(true);
  ASSERT_EQ(v.outputs.size(), 1u);
  const Tolerance& t = v.outputs[0].tolerance;
  EXPECT_EQ(t.metric, Metric::Nmse);
  EXPECT_NE(t.why.find("int8"), std::string::npos) << t.str();
  EXPECT_NE(v.describe(true).find("int8"), std::string::npos);  // reports show the bound and its why
  EXPECT_GT(v.outputs[0].report.nmse, 0.0);                     // the quantized path ran
}

// Every kind and quantized row count (cpu: the GEMV's 1-4, prefill's groups of 4 with and without a
// tail), within the bound; the activation dtypes too, as the kernels widen them first.
TEST_P(Int8Route, EveryKindAndRowCountPasses) {
  for (QuantKind kind : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K})
    for (int64_t m : quantized_rows())
      for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
        const Case c = generate_case(op_or_throw("gemm_quant"), Params::of(GemmQuantParams{kind, m, 96, 1280}), dt, 11);
        const Verdict v = check_case(*be, c, true);
        EXPECT_TRUE(v.pass) << enum_name(kind) << " m=" << m << " " << dtype_name(dt) << "\n" << v.describe(true);
        EXPECT_EQ(v.outputs[0].tolerance.metric, Metric::Nmse);
      }
}

// A mistake a kernel could make: sub-block 0's scale doubled in every row (the reference keeps the
// original weights).
TEST_P(Int8Route, AWrongSubBlockScaleStillFails) {
  Case c = gemv_case(QuantKind::Q4_K, 1, 128);
  Tensor& w = c.tensors.at("weight");
  const int64_t row_bytes = w.shape()[1];
  for (int64_t r = 0; r < w.shape()[0]; ++r) {
    uint8_t& sc = w.as<uint8_t>()[r * row_bytes + 4];  // scales[0]: sub-block 0's 6-bit scale
    sc = static_cast<uint8_t>((sc & 0xC0) | std::min(63, 2 * (sc & 63) + 1));
  }
  const Verdict v = check_case(*be, c, false);
  EXPECT_FALSE(v.pass) << v.describe(true);
  EXPECT_EQ(v.outputs[0].tolerance.metric, Metric::Nmse);
}

// Every output 5% too large (here through the activations the backend is given).
TEST_P(Int8Route, AFivePercentErrorStillFails) {
  Case c = gemv_case(QuantKind::Q8_0, 1, 128);
  Tensor& a = c.tensors.at("a");
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] *= 1.05f;
  const Verdict v = check_case(*be, c, false);
  EXPECT_FALSE(v.pass) << v.describe(true);
}

// Activations with an outlier (a user's dumped activations, not the generators' N(0, 1)): the bound
// is read from their own blocks, so a correct kernel passes. One value of 1000 makes its block's d
// about 8, an NMSE near 1e-3 (cpu's 256-value block) or 1e-4 (32 values), above what N(0, 1) allows;
// the bound says so in its derivation (cpu: about 5.3e-3, the block's 256 d^2 / 12 against the
// activations' energy), and still fails a result 10% off (an NMSE of 1e-2).
TEST_P(Int8Route, OutlierActivationsAreJudgedByTheirOwnBlocks) {
  Case c = gemv_case(QuantKind::Q4_K, 1, 128);
  c.tensors.at("a").as<float>()[5] = 1000.0f;
  c.expected.clear();
  fill_expected(c);  // the reference's, for the new activations
  const Verdict v = check_case(*be, c, false);
  EXPECT_TRUE(v.pass) << v.describe(true);
  EXPECT_EQ(v.outputs[0].tolerance.metric, Metric::Nmse);
  EXPECT_GT(v.outputs[0].tolerance.max_nmse, 2e-4) << v.outputs[0].tolerance.str();
  EXPECT_NE(v.outputs[0].tolerance.why.find("from this case's activation"), std::string::npos);
  Case wrong = c;
  for (int64_t i = 0; i < wrong.tensors.at("a").numel(); ++i) wrong.tensors.at("a").as<float>()[i] *= 1.1f;
  EXPECT_FALSE(check_case(*be, wrong, false).pass);
}

// A non-finite activation has no int8 form: its block is computed from the activations themselves
// (cpu: the whole product takes the exact route; Vulkan: that block, scale -1 in act_q8.glsl), so the
// outputs are non-finite as the reference's are, and the op's tolerance judges them. A NaN in a Q4_K
// row; an Inf in Q4_0 and Q8_0 rows, whose exact products meet it once per weight as the reference
// does.
TEST_P(Int8Route, NonFiniteActivationsMeetTheOpsTolerance) {
  struct Poison {
    QuantKind kind;
    float value;
  };
  for (const Poison& p : {Poison{QuantKind::Q4_K, std::numeric_limits<float>::quiet_NaN()},
                          Poison{QuantKind::Q4_0, std::numeric_limits<float>::infinity()},
                          Poison{QuantKind::Q8_0, -std::numeric_limits<float>::infinity()}}) {
    Case c = gemv_case(p.kind, 1, 128);
    c.tensors.at("a").as<float>()[70] = p.value;
    c.expected.clear();
    fill_expected(c);
    EXPECT_FALSE(be->tolerance(c, "out", c.tensors).has_value()) << enum_name(p.kind);
    const Verdict v = check_case(*be, c, false);
    EXPECT_TRUE(v.pass) << enum_name(p.kind) << "\n" << v.describe(true);
    const float* want = c.expected.at("out").as<float>();
    int non_finite = 0;
    for (int64_t i = 0; i < c.expected.at("out").numel(); ++i) non_finite += !std::isfinite(want[i]);
    EXPECT_EQ(non_finite, 128) << enum_name(p.kind);  // the case does test the non-finite path
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Int8Route, ::testing::Values("cpu", "vulkan"),
                         [](const auto& info) { return info.param; });

TEST(BackendTolerance, OtherBackendsAndCasesKeepTheOpsTolerance) {
  const Case c = gemv_case(QuantKind::Q4_K, 1, 128);
  const std::string op_tol = c.op->tolerance(c.params, c.dtype, "out", c.tensors).str();
  for (const std::string& name : backend_names()) {
    if (name != "cpu" && !(name == "vulkan" && vulkan_int8_asked())) {
      EXPECT_FALSE(backend(name).tolerance(c, "out", c.tensors).has_value()) << name;
    }
  }
  const Verdict ref = check_case(backend("reference"), c, false);
  EXPECT_EQ(ref.outputs[0].tolerance.str(), op_tol);
  // A GEMV with too few outputs for an NMSE runs exactly, under the op's tolerance.
  const Case exact = gemv_case(QuantKind::Q4_K, 1, 5);
  for (const char* name : {"cpu", "vulkan"}) {
    if (!find_backend(name) || !backend(name).availability().ok) continue;
    EXPECT_FALSE(backend(name).tolerance(exact, "out", exact.tensors).has_value()) << name;
    const Verdict v = check_case(backend(name), exact, false);
    EXPECT_TRUE(v.pass) << name << "\n" << v.describe(true);
    EXPECT_EQ(v.outputs[0].tolerance.str(), exact.op->tolerance(exact.params, exact.dtype, "out", exact.tensors).str());
  }
  // Prefill quantizes its activations on cpu as the decode does, and is judged by the same bound.
  const Case prefill = gemv_case(QuantKind::Q4_K, 7, 128);
  EXPECT_EQ(backend("cpu").tolerance(prefill, "out", prefill.tensors)->str(), backend("cpu").tolerance(c, "out", c.tensors)->str());
  EXPECT_TRUE(check_case(backend("cpu"), prefill, false).pass);
  // Vulkan's prefill runs the exact tiled kernel.
  if (find_backend("vulkan") && backend("vulkan").availability().ok) {
    EXPECT_FALSE(backend("vulkan").tolerance(prefill, "out", prefill.tensors).has_value());
  }
}

}  // namespace
}  // namespace ts
