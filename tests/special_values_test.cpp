// Ops on every available backend over inputs the generators never draw. Elementwise transcendentals:
// a dense grid wide enough to reach each kernel's far-tail formulas, and the special values (+-inf,
// NaN, +-0, subnormals, the largest finite numbers). argmax_rows: NaN, -inf and +inf rows, ties
// across vector lanes, maxima in the tail. Expected outputs come from the reference; the judge
// requires NaN and Inf at the same places and every other value within the op's tolerance.
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <vector>

#include <fmt/format.h>
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

// Rows of 600: no vector width divides it (every row has a tail of 8 or 24 past whole vectors), and
// it is longer than a 256-wide work group, whose invocations each scan a strided share.
Case argmax_case(DType dt) {
  constexpr double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  constexpr int64_t n = 600, tail = 593;
  std::vector<std::vector<double>> rows(8, std::vector<double>(n, 0.0));
  for (int64_t i = 0; i < n; ++i) rows[0][i] = rows[3][i] = rows[4][i] = rows[5][i] = double(i % 7) - 3.0;
  for (int64_t i = 0; i < 256; ++i) rows[0][i] = nan;  // NaN first in every lane and invocation never wins
  rows[0][300] = 9, rows[0][400] = 9;                  // and must not hide later values; the earlier tie wins
  rows[1].assign(n, -inf);                              // nothing above -inf: 0
  rows[2].assign(n, nan);                               // all NaN: 0
  rows[3][tail] = inf, rows[3][5] = inf;                // +inf in a lane and in the tail: the lane's
  rows[4][17] = 8, rows[4][1] = 8, rows[4][tail] = 8;   // ties in the same lane of two vectors and the tail
  rows[5][n - 1] = 50;                                  // the maximum only in the tail
  rows[6][9] = -1, rows[6][12] = nan;                   // zeros with a NaN: the first 0
  for (int64_t i = 0; i < n; ++i) rows[7][i] = -double(i);  // strictly falling: 0
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  const Op& op = op_or_throw("argmax_rows");
  const Params p = Params::of(ArgmaxRowsParams{int64_t(rows.size()), n});
  Case c = generate_case(op, p, dt, 5);
  from_f64(c.tensors.at("logits"), flat);
  TensorMap io = c.tensors;
  run_case(backend("reference"), op, p, io);
  c.expected.at("ids") = io.at("ids");
  return c;
}

class SpecialValues : public ::testing::TestWithParam<std::string> {
 protected:
  // Judges make(dt) for op on this test's backend in every float dtype it supports. A dtype it does
  // not support is reported with the backend's reason; none at all, or no driver, skips with it.
  void judge(const std::string& op, const std::function<Case(DType)>& make) {
    Backend& b = backend(GetParam());
    const Availability a = b.availability();
    if (!a.ok) GTEST_SKIP() << GetParam() << " unavailable: " << a.detail;
    std::string unsupported;
    int judged = 0;
    for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
      const Case c = make(dt);
      const Support sup = b.supports(c);
      if (!sup.ok) {
        unsupported += fmt::format(" {} ({})", dtype_name(dt), sup.reason);
        continue;
      }
      ++judged;
      const Verdict v = check_case(b, c, false);
      EXPECT_TRUE(v.pass) << GetParam() << " " << op << " " << dtype_name(dt) << "\n" << v.describe();
    }
    if (judged == 0) GTEST_SKIP() << GetParam() << " supports " << op << " in no float dtype:" << unsupported;
    if (!unsupported.empty()) std::cout << GetParam() << " " << op << " unsupported:" << unsupported << "\n";
  }
};

TEST_P(SpecialValues, Gelu) {
  judge("gelu", [](DType dt) { return special_case("gelu", dt); });
}

TEST_P(SpecialValues, Silu) {
  judge("fused_silu_mul_split", [](DType dt) { return special_case("fused_silu_mul_split", dt); });
}

TEST_P(SpecialValues, ArgmaxRows) { judge("argmax_rows", argmax_case); }

INSTANTIATE_TEST_SUITE_P(Backends, SpecialValues, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
