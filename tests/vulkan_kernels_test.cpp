// The Vulkan kernel list (vulkan/kernels.inc) against the SPIR-V the build embedded from it: every
// (kernel, dtype, subgroup) variant the list implies is there under the name the planners ask for,
// and nothing else is. Needs no device.
#include <cstring>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "vulkan/runtime/shader_table.h"

namespace ts::vk {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;

// Every variant name the list implies, through the planners' own naming (variant_name).
std::set<std::string> listed_variants() {
  std::set<std::string> names;
  for (size_t i = 0; i < std::size(kKernels); ++i)
    for (const KernelDType& d : kKernelDTypes)
      for (bool sg : {false, true}) {
        const auto name = variant_name(static_cast<Kernel>(i), d.dtype, sg);
        EXPECT_TRUE(name.has_value()) << kKernels[i].id;
        if (name) names.insert(*name);
      }
  return names;
}

const ShaderBlob* find_blob(const std::string& name) {
  for (const ShaderBlob& b : shader_blobs())
    if (name == b.name) return &b;
  return nullptr;
}

TEST(VulkanKernels, EveryListedVariantHasSpirv) {
  const std::set<std::string> names = listed_variants();
  size_t expected = 0;
  for (const KernelInfo& k : kKernels) expected += std::size(kKernelDTypes) * (k.reducing ? 2 : 1);
  EXPECT_EQ(names.size(), expected) << "two kernels of the list share a variant name";
  for (const std::string& n : names) {
    const ShaderBlob* b = find_blob(n);
    ASSERT_NE(b, nullptr) << "no SPIR-V for " << n;
    ASSERT_GE(b->bytes, 20u) << n;  // the SPIR-V header is 5 words
    EXPECT_EQ(b->bytes % 4, 0u) << n;
    EXPECT_EQ(b->words[0], kSpirvMagic) << n;
  }
}

TEST(VulkanKernels, NoSpirvOutsideTheList) {
  const std::set<std::string> names = listed_variants();
  std::set<std::string> seen;
  for (const ShaderBlob& b : shader_blobs()) {
    EXPECT_TRUE(names.count(b.name)) << b.name << " is embedded but vulkan/kernels.inc does not name it";
    EXPECT_TRUE(seen.insert(b.name).second) << b.name << " is embedded twice";
  }
  EXPECT_EQ(seen.size(), names.size());
}

TEST(VulkanKernels, SubgroupSuffixOnlyForReducingKernels) {
  EXPECT_EQ(variant_name(Kernel::norms_rms, DType::BF16, true).value_or(""), "norms_rms_bf16_sg");
  EXPECT_EQ(variant_name(Kernel::norms_rms, DType::BF16, false).value_or(""), "norms_rms_bf16");
  EXPECT_EQ(variant_name(Kernel::gemm_tiled, DType::F16, true).value_or(""), "gemm_tiled_f16");
  EXPECT_FALSE(variant_name(Kernel::attn_fa, DType::I32, false).has_value());
  EXPECT_TRUE(kernel_info(Kernel::gemv).reducing);
  EXPECT_FALSE(kernel_info(Kernel::ew_add).reducing);
  EXPECT_STREQ(kernel_info(Kernel::ew_add).file, "elementwise");
}

// The kernels whose planners set Dispatch::spec[0] (the work-group size) must declare constant 0,
// or the value would be ignored without a word.
bool declares_spec_id(const ShaderBlob& b, uint32_t id) {
  constexpr uint32_t kOpDecorate = 71, kDecorationSpecId = 1;
  const size_t n = b.bytes / 4;
  for (size_t i = 5; i < n;) {  // instructions after the 5-word header
    const uint32_t count = b.words[i] >> 16, op = b.words[i] & 0xffff;
    if (count == 0) return false;
    if (op == kOpDecorate && count >= 4 && b.words[i + 2] == kDecorationSpecId && b.words[i + 3] == id) return true;
    i += count;
  }
  return false;
}

TEST(VulkanKernels, WorkGroupSizeIsSpecConstantZero) {
  for (Kernel k : {Kernel::ew_gelu, Kernel::ew_add, Kernel::ew_scaled_add, Kernel::ew_add_bias, Kernel::ew_silu_mul,
                   Kernel::layout_copy, Kernel::layout_gather, Kernel::layout_append_at})
    for (const KernelDType& d : kKernelDTypes) {
      const std::string name = *variant_name(k, d.dtype, false);
      const ShaderBlob* b = find_blob(name);
      ASSERT_NE(b, nullptr) << name;
      EXPECT_TRUE(declares_spec_id(*b, 0)) << name;
    }
}

}  // namespace
}  // namespace ts::vk
