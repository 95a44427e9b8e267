#pragma once
// The qk-norm / RoPE writer (rope.comp) as the rope family's planners (vulkan/dense/rope.cpp) and the
// paged split ops (vulkan/attention/paged_split.cpp) use it: head rows read from one view and written,
// normalised and rotated, to another or into a paged pool.
#include <cstdint>
#include <string>
#include <vector>

#include "core/kinds.h"
#include "core/ops/core_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

// One rope.comp dispatch: rows x heads rows of hd, read at so + t s_tok + h hd, written at
// dof + h d_head + t d_tok, or (dest != AFFINE) into a pool slot through a block table.
// Destinations are core/kinds.h's PoolDest, rope.comp's DEST_* (kinds.glsl).
using Dest = PoolDest;
struct Rope {
  std::string src, dst, w, positions;  // w, positions: any tensor when unused (never read)
  int64_t rows = 1, heads = 1, hd = 1, rotary_dim = 0, mode = 0;
  float eps = 0;
  int64_t so = 0, s_tok = 0, dof = 0, d_head = 0, d_tok = 0, pos_offset = 0;
  // A ragged batch: positions are pos_offsets, sequences cut by cu (cu_seqlens_q).
  std::string cu;
  int64_t num_seqs = 0;
  // Paged destinations: the tables, pool positions from cache_len (one sequence) or the row's own.
  Dest dest = Dest::AFFINE;
  std::string tables;
  int64_t cache_len = 0, block_size = 1, width = 0, x = 1;
};

Dispatch rope(const Target& tg, const Rope& r);

// q, k, v out of a token-major qkv row [q_heads + 2 kv_heads, hd], the first at element `src0`; q
// head-major from element q0 of q_dst (or token-major: q_token_major); k and v at row `row0` of
// head-major destinations with `cap` rows per head, or into pools as `paged` says (its dest for keys).
struct SplitTo {
  std::string q, k, v;
  int64_t src0 = 0, q0 = 0, row0 = 0, cap = 0;
  bool q_token_major = false;
  Rope paged;  // dest, tables, cache_len, block_size, width, x; cu, num_seqs, positions for ragged rows
};

std::vector<Dispatch> split_norm_rope(const Target& tg, const SplitQkvNormRopeParams& p, const SplitTo& to);

}  // namespace ts::vk
