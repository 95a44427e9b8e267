// route_topk_softmax's order on every backend: the larger logit first, equal logits by the lower id,
// and a NaN logit below every number (NaNs among themselves by id), wherever it sits in the row. A
// selection that starts from expert 0 and only replaces on "greater" keeps a NaN at id 0 forever,
// which is the mistake this catches.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/moe_params.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

class RouteOrderOn : public ::testing::TestWithParam<std::string> {};

TEST_P(RouteOrderOn, NaNRanksBelowEveryNumberAndTiesTakeTheLowerId) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::vector<float>> rows = {
      {nan, 1.0f, nan, 3.0f, -2.0f, 3.0f, 0.5f, nan},    // NaN at id 0; a tie at 3
      {2.0f, 2.0f, 2.0f, nan, -1.0f, nan, 2.0f, -5.0f},  // four equal logits
  };
  const std::vector<std::vector<int32_t>> want = {{3, 5, 1, 6, 4, 0, 2, 7}, {0, 1, 2, 6, 4, 7, 3, 5}};
  const RouteTopkSoftmaxParams p{static_cast<int64_t>(rows.size()), 8, 8, false};
  const Op& op = op_or_throw("route_topk_softmax");
  if (const Support s = b->supports(make_problem(op, Params::of(p), DType::F32)); !s.ok) GTEST_SKIP() << s.reason;
  TensorMap io = allocate_from_decls(op.tensors(Params::of(p), DType::F32));
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t e = 0; e < rows[r].size(); ++e) io.at("logits").as<float>()[r * 8 + e] = rows[r][e];
  run_case(*b, op, Params::of(p), io);
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t k = 0; k < 8; ++k) EXPECT_EQ(io.at("out_ids").as<int32_t>()[r * 8 + k], want[r][k]) << "row " << r << " pick " << k;
}

INSTANTIATE_TEST_SUITE_P(Backends, RouteOrderOn, ::testing::Values("reference", "cpu", "opencl", "vulkan"));

}  // namespace
}  // namespace ts
