#pragma once
// The OpenCL attention engine (kernels/attention.cl): one flash kernel with an online softmax, GQA
// heads sharing each K/V tile, and a key split merged in key order. Every attention op of the backend
// (flash, MLA, batched per cache, the paged and kv families) describes its rows and its K/V view here
// and calls flash().
#include <cstdint>
#include <string>
#include <vector>

#include "core/kinds.h"
#include "opencl/plan.h"

namespace ts::ocl {

// Strides (elements) of a key or value tensor viewed as [batch, heads, rows, cols].
struct Strides {
  int64_t batch, head, row;
};

// A paged pool view: position j of sequence s is slot j % block_size of block tables[s][j /
// block_size]; a kv head's rows start the Attention strides' `head` elements into a block, blocks are
// k_block / v_block elements apart. vLLM's layout (vllm): keys in groups of x channels,
// values channel-major. Quantized pools (kv_dtype I8 / F8_E4M3) carry F32 scales [blocks, kv heads,
// block_size].
struct Paging {
  std::string tables;
  int64_t table_width = 0, block_size = 1, k_block = 0, v_block = 0, num_blocks = 0;
  bool vllm = false;
  int64_t x = 0;
  // The kv family's pools: any dtype (F16, BF16, I8, F8_E4M3), picked at run time (-DKV_ANY), with
  // or without scales; otherwise the pools are in the activation dtype.
  bool any_dtype = false;
  KvDtype kv_dtype = KvDtype::F16;
  std::string k_scales, v_scales;  // a -DKV_ANY pool's, where has_scales(kv_dtype)
};

// The query rows as items (one dispatch for a ragged batch): each a run of at most `run` positions of
// one sequence, its q / out rows row0 + head * head_rows + i * pos_rows, position i at first + i,
// seeing keys below min(first + i + 1, kv) (causal). Work-group z finds its item on the device from
// the per-sequence tensors (core/kinds.h's SeqMode, kernels/attention.cl): the plan holds only the number of
// items the parameters allow at most, and an item past the ones a step has leaves at once, so new
// lengths run on the same plan (Launch::upload_inputs).
struct Items {
  SeqMode mode = SeqMode::LENS;
  // Lens: kv lengths [seqs]; Varlen, Fa2, Tiles: cu_seqlens_q [seqs + 1]. second: pos_offsets
  // (Varlen, Tiles) or seq_lens (Fa2). Tiles: tile_seqs / tile_starts [tiles].
  std::string lens, second, tile_seqs, tile_starts;
  int64_t seqs = 0;      // sequences (Tiles: tiles)
  int64_t q_len = 1;     // Lens: each sequence's query positions, ending at its kv length
  int64_t run = 1;       // positions per item at most (Tiles: 4)
  int64_t total_q = 0;   // Varlen, Fa2: query rows in all (token-major)
  int64_t capacity = 0;  // the most keys a sequence may have: what the key split covers
  // Rows: head_rows apart per head, pos_rows per position; Lens' sequence s from s * seq_rows.
  int64_t head_rows = 1, pos_rows = 1, seq_rows = 0, out_rows = 0;
};

struct Attention {
  std::string q, k1, k2, v, out, kv_lens;  // kv_lens empty: the kv_len below
  int64_t kv_len_item = -1, q_off = 0, out_off = 0;
  int64_t batch, nh, nkv, q_len, kv_len, pos_offset;
  bool causal;
  int64_t window;
  float scale;
  int64_t dk1, dk2, dv;
  Strides s1, s2, sv;
  // Paged and varlen attention only.
  const Items* items = nullptr;   // null: `batch` entries of q_len positions, head-major
  const Paging* paging = nullptr;  // null: affine rows
  std::string lse;                 // F32 [nh, out_rows / nh] of token-major rows (FlashAttention-2)
  int64_t piece = -1;              // keys per piece: -1 the device rule, else this (0: never split)
  // Without items: the q / out rows of (head h, position i) are h * head_rows + i * pos_rows; 0 and 0
  // (the default) mean head-major, q_len and 1 (gqa_attention's token-major rows: 1 and nh).
  int64_t head_rows = 0, pos_rows = 0;
};

void flash(Planner& pl, const Attention& a);

// Positions per item for GQA groups of `group` heads: a work-group's row block (at most 16 rows)
// holds whole items.
int64_t item_positions(const Planner& pl, int64_t group, int64_t dv);

}  // namespace ts::ocl
