// The Vulkan engines' push-constant blocks (vulkan/shaders/*_push.glsl) against their C++ mirrors
// (vulkan/push_block.h): every SPIR-V variant of each engine's kernels is read for its push block's
// members as glslang laid them out (OpMemberName, the Offset decoration, the member type's size), and
// each must be the mirror's field of that name at the mirror's offset with the mirror's size. A field
// moved, retyped or renamed on one side fails here. Needs no device.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "vulkan/shader_table.h"
#include "vulkan/shaders/attention_push.glsl"

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

// Every variant of `kernel`'s file (all dtypes, subgroup builds) has exactly the mirror's members.
void expect_block(const std::string& kernel_prefix, const std::vector<PushField>& mirror) {
  int variants = 0;
  for (const ShaderBlob& b : shader_blobs()) {
    if (std::string(b.name).rfind(kernel_prefix, 0) != 0) continue;
    ++variants;
    const std::vector<Member> got = push_members(b);
    ASSERT_EQ(got.size(), mirror.size()) << b.name << ": push block members";
    for (const Member& m : got) {
      const auto f = std::find_if(mirror.begin(), mirror.end(), [&](const PushField& x) { return m.name == x.name; });
      ASSERT_NE(f, mirror.end()) << b.name << ": the shader's member " << m.name << " is not in the mirror";
      EXPECT_EQ(m.offset, f->offset) << b.name << ": offset of " << m.name << " (shader vs mirror)";
      EXPECT_EQ(m.size, f->size) << b.name << ": size of " << m.name << " (shader vs mirror)";
    }
  }
  EXPECT_GT(variants, 0) << "no SPIR-V named " << kernel_prefix << "*";
}

TEST(VulkanPush, AttentionBlockAgrees) {
  using S = AttnPush;
  const std::vector<PushField> mirror{TS_ATTN_PUSH(TS_MIRROR_U, TS_MIRROR_F, TS_MIRROR_A)};
  for (const char* k : {"attn_fa_", "attn_mla_", "attn_kv_", "attn_combine_"}) expect_block(k, mirror);
}

}  // namespace
}  // namespace ts::vk
