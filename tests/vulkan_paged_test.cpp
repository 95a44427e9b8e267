// The paged and kv families on Vulkan, decided without a device: every conformance case of their 14
// ops is one the backend takes (a planner and a support function that accepts it: the coverage
// manifest promises them), and the problems its kernels cannot take are refused with the reason.
#include <string>

#include <gtest/gtest.h>

#include "core/op.h"
#include "vulkan/backend.h"

namespace ts {
namespace {

TEST(VulkanPaged, EveryCaseOfBothFamiliesIsTaken) {
  auto b = VulkanBackend::create();
  int cases = 0;
  for (const Op* op : all_ops()) {
    if (op->family() != "paged" && op->family() != "kv") continue;
    for (const CaseSpec& c : op->cases())
      for (DType dt : c.dtypes) {
        const Support s = b->supports(make_problem(*op, c.params, dt));
        EXPECT_TRUE(s.ok) << op->name() << "/" << c.name << "/" << dtype_name(dt) << ": " << s.reason;
        ++cases;
      }
  }
  EXPECT_GT(cases, 100);  // 14 ops of several cases and dtypes each
}

Support support(const std::string& op_name, const ParamMap& m, DType dt = DType::F32) {
  const Op& op = op_or_throw(op_name);
  return VulkanBackend::create()->supports(make_problem(op, op.parse(m), dt));
}

TEST(VulkanPaged, HeadDimAboveTheKernelsIsRefused) {
  const Support s = support("paged_decode_attention", {{"num_seqs", "1"}, {"num_heads", "2"}, {"num_kv_heads", "1"},
                                                       {"head_dim", "320"}, {"block_size", "16"},
                                                       {"max_num_blocks_per_seq", "2"}, {"q_len", "1"}});
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("256"), std::string::npos) << s.reason;
}

TEST(VulkanPaged, KvRowsThatSplitAWordAreRefused) {
  const ParamMap decode{{"kv_dtype", "I8"}, {"num_q_heads", "2"}, {"num_kv_heads", "1"}, {"head_dim", "6"},
                        {"valid_kv_len", "3"}, {"block_size", "4"}, {"scale", "0.5"}};
  Support s = support("kv_paged_decode_attention", decode);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("multiple of 4"), std::string::npos) << s.reason;
  const ParamMap append{{"kv_dtype", "F8_E4M3"}, {"cache_len_before", "0"}, {"tokens", "2"}, {"block_size", "4"},
                        {"num_kv_heads", "1"}, {"head_dim", "6"}};
  s = support("kv_append_paged", append);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("multiple of 4"), std::string::npos) << s.reason;
}

}  // namespace
}  // namespace ts
