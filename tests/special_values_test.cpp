// Elementwise transcendental ops on every available backend over inputs the generators never draw: a
// dense grid wide enough to reach each kernel's far-tail formulas, and the special values (+-inf,
// NaN, +-0, subnormals, the largest finite numbers). Expected outputs come from the reference; the
// judge requires NaN and Inf at the same places and every other value within the op's tolerance.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/core_params.h"

namespace ts {
namespace {

std::vector<double> special_inputs() {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {inf, -inf, std::nan(""), 0.0, -0.0, 1e-40, -1e-40, 3e38, -3e38, 1e30, -1e30,
                           88.0, -88.0, 104.0, -104.0, 2.0, -2.0, std::nextafter(2.0, 3.0), -std::nextafter(2.0, 3.0)};
  for (double v = -30.0; v <= 30.0; v += 0.0078125) x.push_back(v);  // 7681 points, exact in every dtype's range
  return x;
}

// gelu and the silu in fused_silu_mul_split: the transcendental elementwise ops of the core family.
Case special_case(const std::string& op_name, DType dt) {
  const Op& op = op_or_throw(op_name);
  const std::vector<double> x = special_inputs();
  const int64_t n = static_cast<int64_t>(x.size());
  const Params p = op_name == "gelu" ? Params::of(GeluParams{n}) : Params::of(FusedSiluMulSplitParams{1, n});
  Case c = generate_case(op, p, dt, 5);
  if (op_name == "gelu") {
    from_f64(c.tensors.at("x"), x);
  } else {  // gate_up = [gate | up]: the specials as the gate, ones as up
    std::vector<double> gu(x);
    gu.resize(2 * x.size(), 1.0);
    from_f64(c.tensors.at("gate_up"), gu);
  }
  TensorMap io = c.tensors;
  run_case(backend("reference"), op, p, io);
  for (auto& [name, t] : c.expected) t = io.at(name);
  return c;
}

class SpecialValues : public ::testing::TestWithParam<std::string> {};

TEST_P(SpecialValues, MatchReference) {
  Backend& b = backend(GetParam());
  const Availability a = b.availability();
  if (!a.ok) GTEST_SKIP() << GetParam() << " unavailable: " << a.detail;
  for (const std::string op : {"gelu", "fused_silu_mul_split"})
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      if (!b.supports(op_or_throw(op), dt).ok) continue;
      const Verdict v = check_case(b, special_case(op, dt), false);
      EXPECT_TRUE(v.pass) << GetParam() << " " << op << " " << dtype_name(dt) << "\n" << v.describe();
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, SpecialValues, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
