#pragma once
// The one attention engine's dispatches (shaders/attention.comp), shared by the core attention ops
// (vulkan/attention/attention.cpp) and the paged and kv ops (vulkan/attention/paged_attention.cpp): an
// op states where its sequences' rows and K/V rows are, the engine plans the grid, the key split and
// the combine (vulkan/attention/attention_engine.cpp).
#include <string>
#include <vector>

#include "core/kinds.h"
#include "vulkan/plan.h"

namespace ts::vk {

inline constexpr uint32_t kNoIndex = 0xffffffffu;

// attention.comp's modes are core/kinds.h's SeqMode and KvAddr (push constants), its pool kinds KvDtype.
using Seqs = SeqMode;

struct Attn {
  std::string q, k1, k2, v, kv_lens, out = "out";
  int64_t batch = 1, q_len = 1, kv_len = 0, pos_offset = 0, nh = 1, nkv = 1, dqk = 1, dk1 = 1, dv = 1;
  bool causal = false;
  int64_t window = 0, k1_hs = 0, k2_hs = 0, v_hs = 0;
  int64_t k1_rs = 0, v_rs = 0;  // affine: elements between key rows of k1 and of v (k2's are dqk - dk1)
  bool q_token_major = false;   // UNIFORM: q / out [batch, q_len, nh] rather than [batch, nh, q_len]
  float scale = 1;
  int64_t q_off = 0, o_off = 0;
  uint32_t kv_len_index = kNoIndex;
  int64_t capacity = 0;  // with per-sequence lengths: the most keys a sequence may have
  // Sequences (batch = their count, or the tiles'), Tiles' rows per tile (q_len), Varlen / Fa2's
  // query rows in all (total_q; the shader finds each sequence's from cu_seqlens_q), their
  // per-sequence tensors: kv_lens = lengths or cu_seqlens_q, seq2 = pos_offsets or seq_lens, the
  // tiles' tile_seqs / tile_starts; lse for Fa2.
  Seqs seqs = Seqs::UNIFORM;
  std::string seq2, tile_seqs, tile_starts, lse;
  int64_t total_q = 0;
  // Paged K/V: block tables [batch, width] of blocks of block_size slots, vLLM's key interleave x.
  KvAddr addr = KvAddr::AFFINE;
  std::string tables;
  int64_t block_size = 1, width = 0, x = 1;
  // Pools of packed elements (attn_kv), with their scales for I8 / F8_E4M3.
  bool packed = false;
  KvDtype kind = KvDtype::I8;
  std::string k_scales, v_scales;
};

// The attention dispatch, then with a key split the combine dispatch (the runtime puts a barrier
// between them), which shares its bindings and push constants. mla: the MLA build
// (head dims up to 576).
std::vector<Dispatch> attn(const Target& tg, const Attn& a, bool mla);

// The keys a tile of the decode kernel (shaders/attention_decode.comp) holds for a decode step of
// `group` query heads per kv head of head_dim channels in a paged pool on this device; 0 where the
// engine's general kernel (attention.comp) takes it. The backend's description prints it.
int64_t decode_tile_keys(const Target& tg, int64_t head_dim, int64_t group);

}  // namespace ts::vk
