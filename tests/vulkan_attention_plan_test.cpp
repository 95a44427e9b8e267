// Which kernel the Vulkan attention engine plans, decided without a device: a decode step's few
// query rows per kv head take the decode kernel (shaders/attention_decode.comp) on a device with
// subgroup arithmetic, everything else the general kernel (shaders/attention.comp). Conformance
// proves both kernels right on lavapipe; this proves the decode presets still reach the decode
// kernel, which no output comparison would notice if they did not.
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "vulkan/attention/attention_engine.h"
#include "vulkan/shaders/attention_push.glsl"

namespace ts::vk {
namespace {

// A GPU like the H200's: subgroups of 32, 48 KiB of shared memory, the GPU fill rule.
Target gpu() {
  Target t;
  t.dtype = DType::F16;
  t.subgroups = true;
  t.subgroup_size = 32;
  t.max_shared = 49152;
  t.fill_groups = 1024;
  t.max_range = 1ull << 32;
  for (uint32_t& g : t.max_groups) g = 65535;
  return t;
}

// kv_paged_decode_attention llama3_8b_ctx4096 I8: 32 query heads over 8 kv heads, head_dim 128,
// blocks of 16 slots, one decode row per sequence.
Attn llama_decode() {
  Attn a{.q = "q", .k1 = "k", .k2 = "k", .v = "v", .kv_lens = "lens", .batch = 1, .q_len = 1, .nh = 32, .nkv = 8,
         .dqk = 128, .dk1 = 128, .dv = 128, .causal = true, .scale = 0.088f};
  a.seqs = SeqMode::LENS, a.capacity = 4096, a.addr = KvAddr::FERRUM, a.tables = "tables", a.block_size = 16;
  a.width = 256, a.packed = true, a.kind = KvDtype::I8, a.k_scales = "ks", a.v_scales = "vs";
  return a;
}

uint32_t push_word(const Dispatch& d, size_t offset) { return d.push.at(offset / 4); }

bool takes_decode_kernel(const Target& tg, const Attn& a, bool mla = false) {
  return attn(tg, a, mla).front().shader.rfind("attn_decode", 0) == 0;
}

TEST(VulkanAttentionPlan, ADecodeStepTakesTheDecodeKernelInPiecesOfWholeTiles) {
  const std::vector<Dispatch> ds = attn(gpu(), llama_decode(), false);
  ASSERT_EQ(ds.size(), 2u);  // the attention, then the combine of its key pieces
  EXPECT_EQ(ds[0].shader, "attn_decode_kv_f16");
  EXPECT_EQ(ds[1].shader, "attn_combine_f16");
  // The pool's kind specializes the decode pipeline (KV_KIND); the combine is one for every kind.
  EXPECT_EQ(ds[0].spec, (std::vector<uint32_t>{static_cast<uint32_t>(KvDtype::I8), 8}));  // KV_KIND, NR
  EXPECT_TRUE(ds[1].spec.empty());
  const uint32_t piece = push_word(ds[0], offsetof(AttnPush, piece_keys));
  // Tiles of 64 keys at head_dim 128, two tiles a piece at least.
  EXPECT_EQ(piece % 64, 0u);
  EXPECT_GE(piece, 128u);
  EXPECT_EQ(push_word(ds[0], offsetof(AttnPush, npieces)), (4096 + piece - 1) / piece);
  EXPECT_EQ(ds[0].groups[0], push_word(ds[0], offsetof(AttnPush, npieces)));  // 4 rows: one row block
  EXPECT_EQ(decode_tile_keys(gpu(), 128, 4), 64);
  EXPECT_EQ(decode_tile_keys(gpu(), 64, 4), 128);
  EXPECT_EQ(decode_tile_keys(gpu(), 256, 4), 32);
}

TEST(VulkanAttentionPlan, PlainRowsTakeThePlainDecodeBuild) {
  Attn a = llama_decode();
  a.packed = false, a.addr = KvAddr::AFFINE, a.k1_hs = 4096 * 128, a.v_hs = 4096 * 128, a.k1_rs = 128, a.v_rs = 128;
  a.seqs = SeqMode::UNIFORM, a.kv_len = 4096, a.kv_lens.clear();
  EXPECT_EQ(attn(gpu(), a, false).front().shader, "attn_decode_f16");
  a.k1_rs = 132;  // rows off the 8-element grid a lane's 16-byte loads need
  EXPECT_EQ(attn(gpu(), a, false).front().shader, "attn_fa_f16");
}

TEST(VulkanAttentionPlan, WhatTheDecodeKernelDoesNotTakeGoesToTheGeneralKernel) {
  Attn a = llama_decode();
  EXPECT_TRUE(takes_decode_kernel(gpu(), a));

  Target no_subgroups = gpu();
  no_subgroups.subgroups = false;
  EXPECT_FALSE(takes_decode_kernel(no_subgroups, a));
  Target wide = gpu();
  wide.subgroup_size = 64;  // divides a 64-key tile: taken; at head_dim 256 (32-key tiles) not
  EXPECT_TRUE(takes_decode_kernel(wide, a));
  Attn hd256 = llama_decode();
  hd256.dqk = hd256.dk1 = hd256.dv = 256;
  EXPECT_FALSE(takes_decode_kernel(wide, hd256));
  EXPECT_TRUE(takes_decode_kernel(gpu(), hd256));

  Attn hd96 = llama_decode();
  hd96.dqk = hd96.dk1 = hd96.dv = 96;
  EXPECT_FALSE(takes_decode_kernel(gpu(), hd96));
  Attn vllm = llama_decode();
  vllm.addr = KvAddr::VLLM, vllm.x = 8, vllm.packed = false;
  EXPECT_FALSE(takes_decode_kernel(gpu(), vllm));
  Attn prefill = llama_decode();
  prefill.q_len = 19;  // 76 rows a kv head
  EXPECT_FALSE(takes_decode_kernel(gpu(), prefill));
  Attn varlen = llama_decode();
  varlen.seqs = SeqMode::VARLEN, varlen.total_q = 4;
  EXPECT_FALSE(takes_decode_kernel(gpu(), varlen));
  Attn mla = llama_decode();
  mla.packed = false;
  EXPECT_FALSE(takes_decode_kernel(gpu(), mla, true));
}

TEST(VulkanAttentionPlan, TheKnobKeepsDecodeStepsOnTheGeneralKernel) {
  ASSERT_EQ(setenv("TOUCHSTONE_VULKAN_ATTN_DECODE", "0", 1), 0);
  const bool decode = takes_decode_kernel(gpu(), llama_decode());
  const int64_t described = decode_tile_keys(gpu(), 128, 4);
  ASSERT_EQ(setenv("TOUCHSTONE_VULKAN_ATTN_DECODE", "yes", 1), 0);
  EXPECT_THROW(attn(gpu(), llama_decode(), false), Error);
  EXPECT_EQ(decode_tile_keys(gpu(), 128, 4), 0);  // a description never throws
  unsetenv("TOUCHSTONE_VULKAN_ATTN_DECODE");
  EXPECT_FALSE(decode);
  EXPECT_EQ(described, 0);
}

TEST(VulkanAttentionPlan, FewerRoundsMakeSmallerTilesWhileTheyStillCoverTheGroup) {
  ASSERT_EQ(setenv("TOUCHSTONE_VULKAN_ATTN_ROUNDS", "4", 1), 0);
  const std::vector<Dispatch> ds = attn(gpu(), llama_decode(), false);
  Attn hd256 = llama_decode();
  hd256.dqk = hd256.dk1 = hd256.dv = 256;
  const bool hd256_decode = takes_decode_kernel(gpu(), hd256);  // 16-key tiles: 64 pairs for 128 lanes
  ASSERT_EQ(setenv("TOUCHSTONE_VULKAN_ATTN_ROUNDS", "3", 1), 0);
  EXPECT_THROW(attn(gpu(), llama_decode(), false), Error);
  unsetenv("TOUCHSTONE_VULKAN_ATTN_ROUNDS");
  EXPECT_EQ(ds.front().spec.at(1), 4u);
  EXPECT_EQ(push_word(ds.front(), offsetof(AttnPush, piece_keys)) % 32, 0u);
  EXPECT_FALSE(hd256_decode);
}

}  // namespace
}  // namespace ts::vk
