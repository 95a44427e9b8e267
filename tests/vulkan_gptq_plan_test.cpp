// How the Vulkan backend plans gemm_gptq's act-order decode, decided without a device: every group's
// scale and zero for a work group's columns staged in shared memory (gptq.comp's ACT_STAGE, its sixth
// specialization constant) where the device's shared memory holds them beside the row sums, the per-k
// walk where it does not. Conformance proves both walks right on lavapipe, whose shared memory holds
// every test case's table; this proves a device with less still gets a kernel that fits.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "core/op.h"
#include "core/ops/quant_params.h"
#include "vulkan/plan.h"

namespace ts::vk {
namespace {

Target device_with_shared(uint64_t bytes) {
  Target t;
  t.dtype = DType::F32;
  t.max_shared = bytes;
  for (uint32_t& g : t.max_groups) g = 65535;
  return t;
}

// The staged entries the plan asks for: ACT_STAGE, or 1 (not staged).
uint32_t act_stage(const GptqParams& p, const Target& tg) {
  PlannerTable table;
  add_quant_planners(table);
  const Problem pr = make_problem(op_or_throw("gemm_gptq"), Params::of(p), DType::F32);
  const std::vector<Dispatch> ds = table.at("gemm_gptq").plan(pr.params, Decls(pr), tg);
  EXPECT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds.front().spec.size(), 6u);
  return ds.front().spec.at(5);
}

TEST(VulkanGptqPlan, ActOrderDecodeStagesEveryGroupForItsColumns) {
  // 4096 x 4096, groups of 128: 32 groups x 32 columns a work group, 4 KiB beside the 8 KiB of sums.
  const GptqParams p{4, 128, 1, 4096, 4096, true};
  EXPECT_EQ(act_stage(p, device_with_shared(49152)), 32u * 32u);
  EXPECT_EQ(act_stage(p, device_with_shared(16384)), 32u * 32u);  // the least Vulkan allows
}

TEST(VulkanGptqPlan, ATableTooLargeForTheDeviceTakesThePerKWalk) {
  // 14336 rows in groups of 32: 448 groups x 32 columns, 56 KiB.
  const GptqParams p{4, 32, 1, 14336, 4096, true};
  EXPECT_EQ(act_stage(p, device_with_shared(16384)), 1u);
  EXPECT_EQ(act_stage(p, device_with_shared(49152)), 1u);
  EXPECT_EQ(act_stage(p, device_with_shared(65536)), 448u * 32u);
}

TEST(VulkanGptqPlan, OnlyTheActOrderDecodeStages) {
  EXPECT_EQ(act_stage({4, 128, 1, 4096, 4096, false}, device_with_shared(49152)), 1u);   // no act-order
  EXPECT_EQ(act_stage({4, 128, 64, 4096, 4096, true}, device_with_shared(49152)), 1u);   // prefill
}

}  // namespace
}  // namespace ts::vk
