// The Vulkan engines' push-constant blocks (vulkan/shaders/*_push.glsl) against their C++ mirrors
// (vulkan/runtime/push_block.h): every SPIR-V variant of each engine's kernels is read for its push block's
// members as glslang laid them out (OpMemberName, the Offset decoration, the member type's size), and
// each must be the mirror's field of that name at the mirror's offset with the mirror's size. A field
// moved, retyped or renamed on one side fails here. Needs no device.
#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "vulkan/runtime/shader_table.h"
#include "vulkan/shaders/attention_push.glsl"
#include "vulkan/shaders/kv_append_push.glsl"
#include "vulkan/shaders/moe_gemv_push.glsl"
#include "vulkan/shaders/quant_gemm_push.glsl"
#include "vulkan/shaders/quant_gemv_push.glsl"
#include "vulkan/shaders/rope_push.glsl"

namespace ts::vk {
namespace {

// A member of the push block as the SPIR-V declares it.
struct Member {
  std::string name;
  uint32_t offset = ~0u, size = 0;
};

// The push-constant block's members of one SPIR-V module (empty when it has none).
std::vector<Member> push_members(const ShaderBlob& b) {
  const uint32_t* w = b.words;
  const size_t n = b.bytes / 4;
  constexpr uint32_t kName = 6, kDecorate = 72, kStruct = 30, kInt = 21, kFloat = 22, kArray = 28, kConstant = 43,
                     kPointer = 32, kVariable = 59, kPushConstant = 9, kOffset = 35;
  std::map<uint32_t, uint32_t> scalar_bytes, constants, pointee;
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> arrays;  // element type, length id
  std::map<uint32_t, std::vector<uint32_t>> structs;
  std::map<std::pair<uint32_t, uint32_t>, std::string> names;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> offsets;
  uint32_t push_ptr = 0;
  for (size_t i = 5; i < n;) {
    const uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
    if (len == 0 || i + len > n) break;
    const uint32_t* a = w + i + 1;
    if (op == kName) names[{a[0], a[1]}] = reinterpret_cast<const char*>(a + 2);
    if (op == kDecorate && a[2] == kOffset) offsets[{a[0], a[1]}] = a[3];
    if (op == kStruct) structs[a[0]].assign(a + 1, a + len - 1);
    if (op == kInt || op == kFloat) scalar_bytes[a[0]] = a[1] / 8;
    if (op == kArray) arrays[a[0]] = {a[1], a[2]};
    if (op == kConstant) constants[a[1]] = a[2];
    if (op == kPointer) pointee[a[0]] = a[2];
    if (op == kVariable && a[2] == kPushConstant) push_ptr = a[0];
    i += len;
  }
  std::vector<Member> out;
  if (!push_ptr) return out;
  const uint32_t block = pointee.at(push_ptr);
  const std::vector<uint32_t>& types = structs.at(block);
  for (uint32_t m = 0; m < types.size(); ++m) {
    Member x;
    x.name = names.count({block, m}) ? names.at({block, m}) : "?";
    if (offsets.count({block, m})) x.offset = offsets.at({block, m});
    const uint32_t t = types[m];
    if (scalar_bytes.count(t))
      x.size = scalar_bytes.at(t);
    else if (arrays.count(t))
      x.size = scalar_bytes.at(arrays.at(t).first) * constants.at(arrays.at(t).second);
    out.push_back(x);
  }
  return out;
}

#define TS_MIRROR_U(n) PushField{#n, offsetof(S, n), sizeof(S::n)},
#define TS_MIRROR_F(n) PushField{#n, offsetof(S, n), sizeof(S::n)},
#define TS_MIRROR_A(n, count) PushField{#n, offsetof(S, n), sizeof(S::n)},

const ShaderBlob* find_blob(const std::string& name) {
  for (const ShaderBlob& b : shader_blobs())
    if (name == b.name) return &b;
  return nullptr;
}

// Every SPIR-V variant of kernel `id` (vulkan/kernels.inc: each dtype, the subgroup build where it has
// one) has exactly the mirror's members, each at the mirror's offset with the mirror's size.
void expect_block(const std::string& id, const std::vector<PushField>& mirror) {
  const auto k = std::find_if(std::begin(kKernels), std::end(kKernels), [&](const KernelInfo& x) { return id == x.id; });
  ASSERT_NE(k, std::end(kKernels)) << "no kernel " << id << " in vulkan/kernels.inc";
  int variants = 0;
  for (const KernelDType& dt : kKernelDTypes)
    for (bool sg : {false, true}) {
      const auto name = variant_name(static_cast<Kernel>(k - std::begin(kKernels)), dt.dtype, sg);
      ASSERT_TRUE(name.has_value());
      const ShaderBlob* b = find_blob(*name);
      ASSERT_NE(b, nullptr) << "no SPIR-V " << *name;
      ++variants;
      const std::vector<Member> got = push_members(*b);
      ASSERT_EQ(got.size(), mirror.size()) << *name << ": push block members";
      for (const Member& m : got) {
        const auto f =
            std::find_if(mirror.begin(), mirror.end(), [&](const PushField& x) { return m.name == x.name; });
        ASSERT_NE(f, mirror.end()) << *name << ": the shader's member " << m.name << " is not in the mirror";
        EXPECT_EQ(m.offset, f->offset) << *name << ": offset of " << m.name << " (shader vs mirror)";
        EXPECT_EQ(m.size, f->size) << *name << ": size of " << m.name << " (shader vs mirror)";
      }
    }
  EXPECT_GT(variants, 0);
}

TEST(VulkanPush, AttentionBlockAgrees) {
  using S = AttnPush;
  const std::vector<PushField> mirror{TS_ATTN_PUSH(TS_MIRROR_U, TS_MIRROR_F, TS_MIRROR_A)};
  for (const char* k : {"attn_fa", "attn_mla", "attn_kv", "attn_combine", "attn_decode", "attn_decode_kv"}) expect_block(k, mirror);
}

TEST(VulkanPush, KvAppendBlockAgrees) {
  using S = KvAppendPush;
  expect_block("kv_append", {TS_KV_APPEND_PUSH(TS_MIRROR_U, TS_MIRROR_F, TS_MIRROR_A)});
}

TEST(VulkanPush, ExpertGemvBlockAgrees) {
  using S = MoeGemvPush;
  expect_block("moe_gemv", {TS_MOE_GEMV_PUSH(TS_MIRROR_U, TS_MIRROR_F, TS_MIRROR_A)});
}

// gemv_quant_m1.comp declares its block by hand: the planner fills it from the GEMV's mirror, so its
// SPIR-V is held to that mirror too.
TEST(VulkanPush, QuantGemvBlocksAgree) {
  using S = QuantGemvPush;
  const std::vector<PushField> mirror{TS_QUANT_GEMV_PUSH(TS_MIRROR_U, TS_MIRROR_F, TS_MIRROR_A)};
  for (const char* k : {"gemv_quant", "gemv_quant_m1"}) expect_block(k, mirror);
}

TEST(VulkanPush, QuantGemmBlockAgrees) {
  using S = QuantGemmPush;
  const std::vector<PushField> mirror{TS_QUANT_GEMM_PUSH(TS_MIRROR_U, TS_MIRROR_F, TS_MIRROR_A)};
  for (const char* k : {"gemm_quant", "moe_gemm"}) expect_block(k, mirror);
}

TEST(VulkanPush, RopeBlockAgrees) {
  using S = RopePush;
  expect_block("rope", {TS_ROPE_PUSH(TS_MIRROR_U, TS_MIRROR_F, TS_MIRROR_A)});
}

}  // namespace
}  // namespace ts::vk
