// Tolerances derived from each case's own data (core/op.h, DerivedTolerance). A case from a checkpoint
// or from a user's tensors can have any magnitudes: every op's smoke cases are tried with every float
// input (activations, weights, scales, tables, pools) and every GGUF block scale multiplied by 1e4 and
// by 1e-4, on every backend, and must pass; and the tolerance must still catch an error there, so that
// a bound that grew to cover anything (or stayed at the generator's absolute size while the outputs
// shrank by 1e8) fails here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/magnitude.h"
#include "core/ops/quant_params.h"
#include "core/quant/formats.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

// Multiplies the f16 scales of every block of GGUF rows (d, and m / dmin where the kind has one).
void scale_gguf_blocks(Tensor& bytes, QuantKind k, double s) {
  const quant::Format* f = quant::format(k);
  if (!f) return;
  uint8_t* p = bytes.as<uint8_t>();
  for (size_t b = 0; b + static_cast<size_t>(f->block_bytes) <= bytes.nbytes(); b += static_cast<size_t>(f->block_bytes))
    for (int16_t off : f->f16_scales) {
      if (off < 0) continue;
      uint16_t h = 0;
      std::memcpy(&h, p + b + static_cast<size_t>(off), 2);
      h = f32_to_f16(static_cast<float>(f16_to_f32(h) * s));
      std::memcpy(p + b + static_cast<size_t>(off), &h, 2);
    }
}

// The GGUF kind of U8 tensor `name` of a case: `kind.i` for part `name.i`, else `kind`; none when the
// case names no block kind for it.
const quant::Format* gguf_kind(const ParamMap& params, const std::string& name) {
  std::string key = "kind";
  if (const size_t dot = name.rfind('.'); dot != std::string::npos) key += name.substr(dot);
  const auto it = params.find(key);
  if (it == params.end()) return nullptr;
  for (QuantKind k : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K})
    if (enum_name(k) == it->second) return quant::format(k);
  return nullptr;
}

// An op's smoke case in F32 with every float input and in-out, and every GGUF block scale, times s;
// expected outputs from the reference.
Case scaled_case(const Op& op, const CaseSpec& spec, double s) {
  Case c = generate_case(op, spec.params, DType::F32, 29);
  const ParamMap params = op.to_map(spec.params);
  for (const TensorDecl& d : c.decls) {
    if (d.role == Role::Out) continue;
    Tensor& t = c.tensors.at(d.name);
    if (d.dtype == DType::F32 || d.dtype == DType::F16 || d.dtype == DType::BF16) {
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) * s);
    } else if (d.dtype == DType::U8) {
      if (const quant::Format* f = gguf_kind(params, d.name)) scale_gguf_blocks(t, f->kind, s);
    }
  }
  c.expected.clear();
  TensorMap want = working_set(c);
  execute_case(backend("reference"), c, want);
  for (const auto& name : c.output_names()) c.expected.emplace(name, want.at(name));
  return c;
}

// Each op's smoke cases that take F32 activations.
std::vector<const CaseSpec*> smoke_cases(const Op& op) {
  std::vector<const CaseSpec*> r;
  for (const CaseSpec& c : op.cases())
    if (c.tier == Tier::Smoke && std::find(c.dtypes.begin(), c.dtypes.end(), DType::F32) != c.dtypes.end())
      r.push_back(&c);
  return r;
}

constexpr double kScales[] = {1e4, 1e-4};

class DerivedTolerance : public ::testing::TestWithParam<std::string> {};

// Every backend passes every op's scaled smoke cases: its tolerance follows the data's magnitudes.
TEST_P(DerivedTolerance, ScaledDataPasses) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable here";
  int judged = 0;
  for (const Op* op : all_ops())
    for (const CaseSpec* spec : smoke_cases(*op))
      for (double s : kScales) {
        const Case c = scaled_case(*op, *spec, s);
        if (!b->supports(c).ok) continue;
        const Verdict v = check_case(*b, c, false);
        if (!v.unsupported.empty()) continue;
        ++judged;
        EXPECT_TRUE(v.pass) << GetParam() << " " << op->name() << " " << spec->name << " x" << s << "\n"
                            << v.describe(true);
      }
  EXPECT_GT(judged, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, DerivedTolerance, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

// The element of `want` with the largest finite magnitude among those the op compares; -1 when none.
int64_t largest(const Tensor& want, const std::vector<uint8_t>& compared) {
  int64_t best = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (!compared.empty() && !compared[static_cast<size_t>(i)]) continue;
    const double v = std::fabs(want.get(i));
    if (std::isfinite(v) && (best < 0 || v > std::fabs(want.get(best)))) best = i;
  }
  return best;
}

// With the data scaled either way, every output with a float tolerance still catches an error: its
// largest element moved by 3 times what the tolerance allows there fails (the bound is finite and
// the judge applies it), and, with the data 1e4 times smaller, moved by 1% of the output's size fails
// too (the bound shrank with the data: a generator-sized absolute bound would swallow the whole output).
TEST(DerivedToleranceCatches, AnErrorOfTheScaledOutputs) {
  int judged = 0;
  for (const Op* op : all_ops())
    for (const CaseSpec* spec : smoke_cases(*op))
      for (double s : kScales) {
        const Case c = scaled_case(*op, *spec, s);
        for (const auto& [name, want] : c.expected) {
          const Tolerance tol = op->tolerance(c.params, c.dtype, name, c.tensors);
          if (tol.metric != Metric::Allclose || tol.exact()) continue;
          const std::vector<uint8_t> compared = op->compared(c.params, name, c.tensors, c.expected);
          const int64_t i = largest(want, compared);
          if (i < 0 || want.get(i) == 0) continue;
          ++judged;
          const std::string what = fmt::format("{} {} {} x{}: {}", op->name(), spec->name, name, s, tol.str());
          const double w = want.get(i), bound = tol.atol + tol.rtol * std::fabs(w);
          ASSERT_TRUE(std::isfinite(bound)) << what;
          Tensor got = want;
          got.set(i, w + std::copysign(3 * bound, w));
          EXPECT_FALSE(compare(want, got, tol, compared).pass()) << what << ": 3x the bound at [" << i << "] passed";
          if (s < 1) {
            got.set(i, w * 1.01);
            EXPECT_FALSE(compare(want, got, tol, compared).pass())
                << what << ": an error of 1% of the largest output at [" << i << "] passed";
          }
        }
      }
  EXPECT_GT(judged, 100);
}

// A legal Q6_K tensor whose block scales d are all 1.0 (weights in the thousands), as a checkpoint may
// hold, made a gemm_quant case of 3 rows: its tolerance is derived from its weights, and names them.
TEST(DerivedToleranceCatches, Q6KWithUnitBlockScales) {
  const Op& op = op_or_throw("gemm_quant");
  const GemmQuantParams p{QuantKind::Q6_K, 3, 16, 512};
  Case c = generate_case(op, Params::of(p), DType::F32, 7);
  const quant::Format& f = quant::block_format(QuantKind::Q6_K);
  Tensor& w = c.tensors.at("weight");
  for (size_t b = 0; b < w.nbytes(); b += static_cast<size_t>(f.block_bytes)) {
    const uint16_t one = f32_to_f16(1.0f);
    std::memcpy(w.as<uint8_t>() + b + f.f16_scales[0], &one, 2);
  }
  TensorMap want = working_set(c);
  execute_case(backend("reference"), c, want);
  c.expected["out"] = want.at("out");
  const Tolerance tol = op.tolerance(c.params, c.dtype, "out", c.tensors);
  EXPECT_NE(tol.why.find("max|dequantized w|"), std::string::npos) << tol.str();
  EXPECT_GT(magnitude::max_abs_gguf(w, QuantKind::Q6_K, 512), 1000.0);
  for (const std::string& name : backend_names()) {
    Backend* b = test::available_backend(name);
    if (!b || !b->supports(c).ok) continue;
    const Verdict v = check_case(*b, c, false);
    if (!v.unsupported.empty()) continue;
    EXPECT_TRUE(v.pass) << name << "\n" << v.describe(true);
  }
}

}  // namespace
}  // namespace ts
