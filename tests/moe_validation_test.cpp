// Bad input to the moe routing and combine ops: one-line Errors naming the tensor or parameter, before
// any kernel runs. Each test loads the good case first, so a check that rejects everything cannot pass.
#include <string>

#include <gtest/gtest.h>

#include "tests/expect_error.h"

#include "core/case_file.h"
#include "tests/good_case.h"
#include "core/op.h"
#include "core/ops/moe_params.h"

namespace ts {
namespace {

TEST(MoeValidation, ExpertIdsOutOfRange) {
  SafetensorsFile f = good_case("compute_ids_tpe", {{"batch", "3"}, {"num_experts", "8"}, {"top_k", "2"}});
  f.tensors.at("selected_ids").as<int32_t>()[5] = 8;
  expect_error([&] { case_from_file(f); }, "selected_ids[5] = 8 is not an expert id: must be in [0, num_experts = 8)");
  f.tensors.at("selected_ids").as<int32_t>()[5] = -1;
  expect_error([&] { case_from_file(f); }, "selected_ids[5] = -1 is not an expert id");

  f = good_case("moe_align_block_size", {{"num_experts", "8"}, {"block_size", "16"}});
  f.tensors.at("topk_ids").as<int32_t>()[0] = 1000;
  expect_error([&] { case_from_file(f); }, "topk_ids[0] = 1000 is not an expert id");
}

TEST(MoeValidation, TopKLargerThanNumExperts) {
  const ParamMap route = {{"batch", "2"}, {"num_experts", "4"}, {"top_k", "4"}, {"norm_topk_prob", "true"}};
  EXPECT_NO_THROW(op_or_throw("route_topk_softmax").parse(route));
  ParamMap bad = route;
  bad["top_k"] = "5";
  expect_error([&] { op_or_throw("route_topk_softmax").parse(bad); }, "top_k 5 is larger than num_experts 4");
  expect_error([&] { op_or_throw("compute_ids_tpe").parse({{"batch", "2"}, {"num_experts", "4"}, {"top_k", "9"}}); },
               "top_k 9 is larger than num_experts 4");
  // moe_align_block_size takes top_k from topk_ids' shape: a case with 2 experts but 3 columns.
  SafetensorsFile f = good_case("moe_align_block_size", {{"num_experts", "8"}, {"block_size", "16"}});
  f.metadata["num_experts"] = "1";
  expect_error([&] { case_from_file(f); }, "top_k 2 is larger than num_experts 1");
}

TEST(MoeValidation, OffsetsPastTheEnd) {
  // weights of 6 and out of 10 elements around a window of batch 2, top_k 2, hidden 3.
  const Op& op = op_or_throw("weighted_sum_batched_offset");
  const Params p = Params::of(WeightedSumBatchedOffsetParams{2, 2, 3, 1, 2, 6, 10});
  SafetensorsFile f = case_to_file(op, p, op.make_case(p, DType::F32, 7), {}, 7);
  EXPECT_NO_THROW(case_from_file(f));
  f.metadata["weights_offset"] = "3";
  expect_error([&] { case_from_file(f); }, "weights_offset 3 + batch * top_k 4 runs past the end of weights (6 elements)");
  f.metadata["weights_offset"] = "1";
  f.metadata["out_offset"] = "9223372036854775800";
  expect_error([&] { case_from_file(f); }, "out_offset 9223372036854775800 + batch * hidden 6 runs past the end of out");
}

TEST(MoeValidation, MisshapenAndMistypedIds) {
  SafetensorsFile f = good_case("compute_ids_tpe", {{"batch", "3"}, {"num_experts", "8"}, {"top_k", "2"}});
  f.tensors["selected_ids"] = Tensor(DType::U32, {3, 2});
  expect_error([&] { case_from_file(f); }, "tensor 'selected_ids' has dtype U32, expected I32");
  f = good_case("weighted_sum_stacked", {{"n_slots", "2"}, {"hidden", "5"}});
  f.tensors["weights"] = Tensor(DType::F16, {2});
  expect_error([&] { case_from_file(f); }, "tensor 'weights' has dtype F16, expected F32");
}

}  // namespace
}  // namespace ts
