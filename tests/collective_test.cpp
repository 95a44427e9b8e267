// The collective family in one process: the reference's rules (NaN propagation and signed zeros of
// max / min, IEEE sums, all_gather's layout, broadcast's source) checked bit for bit, the bad input
// of docs/catalog.md (src_rank outside the world, len that does not match, a missing x.i, a world the
// communicator does not have) as one line each, and the single-rank world's identity collectives.
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/case_file.h"
#include "core/collective.h"
#include "tests/expect_error.h"
#include "tests/good_case.h"
#include "reference/kernels.h"

namespace ts {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN(), kInf = std::numeric_limits<float>::infinity();

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// An all_reduce over 3 ranks of hand-set values, run by the reference: out.0 .. out.2 as floats.
std::vector<float> reduce3(ReduceOp op, std::array<float, 3> a, std::array<float, 3> b) {
  const Op& o = op_or_throw("all_reduce");
  const Params p = Params::of(AllReduceParams{{3, 2}, op});
  TensorMap t = o.make_case(p, DType::F32, 1);
  for (int r = 0; r < 3; ++r) {
    t.at(rank_tensor("x", r)).as<float>()[0] = a[r];
    t.at(rank_tensor("x", r)).as<float>()[1] = b[r];
  }
  ref::run(o, p, t);
  std::vector<float> v;
  for (int r = 0; r < 3; ++r) {
    const float* out = t.at(rank_tensor("out", r)).as<float>();
    EXPECT_EQ(bits(out[0]), bits(t.at("out.0").as<float>()[0])) << "rank " << r << " differs from rank 0";
    v.push_back(out[0]), v.push_back(out[1]);
  }
  return {v[0], v[1]};
}

TEST(CollectiveReference, MaxMinPropagateNaNAndOrderSignedZeros) {
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {
    // A NaN on any one rank, in any position, wins over every number (fmax would drop it).
    for (int at = 0; at < 3; ++at) {
      std::array<float, 3> a = {1, 2, 3};
      a[at] = kNaN;
      EXPECT_TRUE(std::isnan(reduce3(op, a, {0, 0, 0})[0])) << enum_name(op) << " NaN on rank " << at;
    }
    // +0 is above -0, whichever rank holds which.
    const auto z = reduce3(op, {0.0f, -0.0f, -0.0f}, {-0.0f, -0.0f, 0.0f});
    const uint32_t want = op == ReduceOp::Max ? bits(0.0f) : bits(-0.0f);
    EXPECT_EQ(bits(z[0]), want) << enum_name(op);
    EXPECT_EQ(bits(z[1]), want) << enum_name(op);
  }
  const auto inf = reduce3(ReduceOp::Max, {kInf, 1, -kInf}, {-kInf, -kInf, -kInf});
  EXPECT_EQ(inf[0], kInf);
  EXPECT_EQ(inf[1], -kInf);
}

TEST(CollectiveReference, SumIsIeeeInDouble) {
  EXPECT_TRUE(std::isnan(reduce3(ReduceOp::Sum, {kInf, 1, -kInf}, {0, 0, 0})[0]));
  EXPECT_EQ(bits(reduce3(ReduceOp::Sum, {-0.0f, -0.0f, -0.0f}, {0.0f, -0.0f, -0.0f})[0]), bits(-0.0f));
  EXPECT_EQ(bits(reduce3(ReduceOp::Sum, {-0.0f, -0.0f, -0.0f}, {0.0f, -0.0f, -0.0f})[1]), bits(0.0f));
  // Rounded once from double: 2^24 + 1 + 1 is 2^24 + 2 exactly, where F32 adding left to right
  // (2^24 + 1 rounds to 2^24) would give 2^24.
  EXPECT_EQ(reduce3(ReduceOp::Sum, {16777216.0f, 1, 1}, {0, 0, 0})[0], 16777218.0f);
}

TEST(CollectiveReference, AllGatherLaysRanksInOrderAndBroadcastReadsItsSource) {
  const Op& g = op_or_throw("all_gather");
  const Params gp = Params::of(AllGatherParams{{3, 2}});
  TensorMap t = g.make_case(gp, DType::BF16, 3);
  ref::run(g, gp, t);
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q)
      EXPECT_EQ(std::memcmp(t.at(rank_tensor("out", r)).data() + q * 4, t.at(rank_tensor("x", q)).data(), 4), 0)
          << "out." << r << " block " << q;
  const Op& b = op_or_throw("broadcast");
  const Params bp = Params::of(CollectiveBroadcastParams{{4, 5}, 2});
  TensorMap u = b.make_case(bp, DType::F16, 3);
  ref::run(b, bp, u);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(std::memcmp(u.at(rank_tensor("out", r)).data(), u.at("x.2").data(), 10), 0) << "out." << r;
}

TEST(CollectiveValidation, BadInputIsOneLine) {
  const ParamMap m = {{"world_size", "3"}, {"len", "5"}, {"src_rank", "2"}};
  SafetensorsFile f = good_case("broadcast", m);
  ParamMap past = m;
  past["src_rank"] = "3";
  expect_error([&] { op_or_throw("broadcast").parse(past); }, "parameter 'src_rank' is 3, outside the world of 3 ranks");
  past["src_rank"] = "-1";
  expect_error([&] { op_or_throw("broadcast").parse(past); }, "parameter 'src_rank' is -1");
  // len that does not match the tensors.
  SafetensorsFile len = f;
  len.metadata["len"] = "4";
  expect_error([&] { case_from_file(len); }, "x.0");
  // A missing x.i.
  SafetensorsFile missing = f;
  missing.tensors.erase("x.1");
  expect_error([&] { case_from_file(missing); }, "x.1");
  // A world past any launcher's, and none.
  ParamMap w = {{"world_size", "0"}, {"len", "5"}};
  expect_error([&] { op_or_throw("all_gather").parse(w); }, "parameter 'world_size' must be positive");
  w["world_size"] = "5000";
  expect_error([&] { op_or_throw("all_gather").parse(w); }, "parameter 'world_size' is 5000");
  w = {{"world_size", "2"}, {"len", "-1"}};
  expect_error([&] { op_or_throw("all_gather").parse(w); }, "parameter 'len' must not be negative");
}

TEST(CollectiveSingleRank, WorldOfOneIsTheIdentityAndRefusesOtherWorlds) {
  ASSERT_EQ(world().size(), 1);
  const CollectiveCall one = call_of(AllReduceParams{{1, 3}, ReduceOp::Max}, DType::BF16);
  const uint16_t x[3] = {0x7fc1, 0x8000, 0x3f80};  // a NaN with a payload, -0, 1
  uint16_t out[3] = {};
  agree_on_call(one);
  run_host_collective(one, x, out);
  EXPECT_EQ(out[1], 0x8000);
  EXPECT_EQ(out[2], 0x3f80);
  EXPECT_TRUE(std::isnan(bf16_to_f32(out[0])));
  expect_error([] { agree_on_call(call_of(AllGatherParams{{3, 1}}, DType::F32)); },
               "the case's world_size is 3, but 1 rank is running (mpiexec -n 3 runs it)");
  // The matrix skips the other worlds with the reason.
  const Problem pr = make_problem(op_or_throw("all_gather"), Params::of(AllGatherParams{{3, 1}}), DType::F32);
  const Support s = world_runs(pr);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("mpiexec -n 3"), std::string::npos) << s.reason;
}

}  // namespace
}  // namespace ts
