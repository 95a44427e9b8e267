#pragma once
// The attention view of the paged and kv families' attention ops (docs/catalog.md, "Family paged",
// "The attention view"): which tensors give each sequence's query rows, the position of its first row,
// its kv length and its block-table row (the sequence view, by SeqMode), and where its keys and values
// live (the pool view: layout, geometry, element kind, scales). Each op's description returns its view
// (OpDef::view), computed once from the parameters; the reference, cpu, OpenCL and Vulkan read it and
// none derives it again. The device engines take the view's mode and sizes as launch arguments and
// find the sequences on the device; the host backends walk them with sequences() below.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kinds.h"
#include "core/ops/paged/attention_common.h"
#include "core/ops/paged/pool.h"
#include "core/ops/paged_params.h"
#include "core/tensor.h"

// The ops that are one computation over their attention view (their descriptions' OpDef::view): the
// reference and every backend register them on their one attention engine from this list, so an op
// that rides the engine adds its line here and none of its own in a backend.
#define TS_ATTENTION_VIEW_OPS(X)                                                                         \
  X(paged_decode_attention) X(paged_decode_attention_v2) X(paged_varlen_attention)                     \
  X(paged_varlen_attention_vllm) X(paged_varlen_attention_vllm_layout) X(paged_varlen_attention_vllm_tiled_q4) \
  X(paged_varlen_attention_fa2_ffi) X(paged_batched_decode_attention) X(kv_paged_decode_attention)

namespace ts::paged {

// Where K/V position j of a sequence lives: slot j % block_size of block tables[row][j / block_size],
// in ferrum's or vLLM's layout (KvAddr), kv head h's rows block_size * head_dim elements into a block.
struct PoolView {
  KvAddr addr = KvAddr::FERRUM;
  std::string k = "k_pool", v = "v_pool", tables = "block_tables";
  int64_t kv_heads = 1, head_dim = 1, block_size = 1;
  int64_t width = 0;       // table entries per sequence
  int64_t num_blocks = 0;  // the pools' blocks
  int64_t x = 1;           // vLLM's key interleave (the parameter, checked against the pool dtype); 1 for ferrum
  // The kv family's pools: elements of `kind`, decoded on load (scaled kinds with an F32 scale per
  // (block, kv head, slot) in k_scales / v_scales). Otherwise the pools hold the case dtype.
  bool packed = false;
  KvDtype kind = KvDtype::F16;
  std::string k_scales, v_scales;

  Layout layout() const { return addr == KvAddr::VLLM ? Layout::Vllm : Layout::Ferrum; }
  Pool geometry() const { return {layout(), num_blocks, kv_heads, block_size, head_dim, x}; }
};

// How the work finds its sequences (core/kinds.inc's SeqMode):
//   UNIFORM  one sequence of q_len positions ending at kv_len (a parameter);
//   LENS     seqs sequences, sequence s of q_len positions ending at kv length lens[s];
//   VARLEN   a ragged batch: sequence s owns token-major rows cu[s] .. cu[s + 1] of lens (cu_seqlens_q),
//            its first row at position second[s] (pos_offsets), its kv that plus its rows;
//   FA2      the same, aligned to the kv's end: kv second[s] (seq_lens), first row at kv - rows;
//   TILES    seqs tiles of at most q_len (4) rows: tile t is rows tile_starts[t] .. of sequence
//            tile_seqs[t] of the VARLEN batch; rows no tile covers are left unwritten.
// Row i of a sequence sees keys [0, min(first + i + 1, kv)).
struct SeqView {
  SeqMode mode = SeqMode::LENS;
  int64_t seqs = 1;      // sequences (TILES: tiles)
  int64_t q_len = 1;     // UNIFORM, LENS: positions per sequence; TILES: rows per tile at most
  int64_t total_q = 0;   // VARLEN, FA2, TILES: query rows in all
  int64_t kv_len = 0;    // UNIFORM: the kv length
  int64_t capacity = 0;  // the most keys a sequence may have, from the parameters (a device's key split)
  std::string lens, second, tile_seqs, tile_starts;
  bool head_major = false;  // q and out [heads, q_len, head_dim] (one sequence's prefill), else token-major
};

struct AttentionView {
  std::string q = "q", out = "out";
  std::string lse;  // FA2: F32 [heads, total_q]
  int64_t num_heads = 1, head_dim = 1;
  float scale = 1;
  int64_t key_partition = 0;  // paged_decode_attention_v2's 512-key partitions, merged in key order; 0: none stated
  SeqView seq;
  PoolView pool;

  // The q / out row (of head_dim elements) of head h at row `row` of the token-major batch, or at
  // position i of the one head-major sequence.
  int64_t row(int64_t token_row, int64_t h) const {
    return seq.head_major ? h * seq.q_len + token_row : token_row * num_heads + h;
  }
};

// The views of the ops (their descriptions' OpDef::view).
// Decode through lens (context_lens or valid_kv_lens), q_len positions per sequence; capacity the
// most keys a sequence may have.
AttentionView decode_view(const PagedPoolParams& p, Layout layout, int64_t seqs, int64_t q_len, const char* lens,
                          int64_t capacity);
// A ragged batch through cu_seqlens_q and pos_offsets (or, fa2, seq_lens, with lse).
AttentionView varlen_view(const PagedPoolParams& p, Layout layout, bool fa2, int64_t seqs, int64_t total_q,
                          int64_t max_kv_len);
// paged_varlen_attention_vllm_tiled_q4's tiles of 4 rows.
AttentionView tiles_view(const PagedVarlenTiledParams& p);
// kv_paged_decode_attention: one sequence of valid_kv_len keys in packed kv_dtype pools.
AttentionView kv_decode_view(const KvPagedDecodeParams& p);

// One sequence (or tile) as the host backends walk it, read from the case's tensors (a device engine
// reads the same on the device): its query rows [row0, row0 + rows) of the token-major batch (or the
// head-major sequence's positions), the position of its first row, its kv length and its table row.
struct SeqRows {
  int64_t table, row0, rows, first, kv;
  int64_t visible(int64_t i) const { return std::clamp<int64_t>(first + i + 1, 0, kv); }  // keys row i sees
};

// f(SeqRows) for each sequence (tile) in order, reading the view's U32 tensors in place: no allocation,
// so a captured cpu step replays it as it is. The values were checked by the op's validate_data.
template <class F> void for_each_sequence(const AttentionView& v, const TensorMap& t, F&& f) {
  const SeqView& s = v.seq;
  auto read = [&t](const std::string& name) { return t.at(name).as<uint32_t>(); };
  switch (s.mode) {
    case SeqMode::UNIFORM:
      for (int64_t i = 0; i < s.seqs; ++i) f(SeqRows{i, i * s.q_len, s.q_len, s.kv_len - s.q_len, s.kv_len});
      return;
    case SeqMode::LENS: {
      const uint32_t* kv = read(s.lens);
      for (int64_t i = 0; i < s.seqs; ++i)
        f(SeqRows{i, s.head_major ? 0 : i * s.q_len, s.q_len, int64_t{kv[i]} - s.q_len, int64_t{kv[i]}});
      return;
    }
    case SeqMode::VARLEN:
    case SeqMode::FA2: {
      const uint32_t *cu = read(s.lens), *second = read(s.second);
      for (int64_t i = 0; i < s.seqs; ++i) {
        const int64_t rows = int64_t{cu[i + 1]} - cu[i];
        const SeqSpan span = seq_span(s.mode == SeqMode::FA2, rows, second[i]);
        f(SeqRows{i, cu[i], rows, span.first, span.kv});
      }
      return;
    }
    case SeqMode::TILES: {
      const uint32_t *cu = read(s.lens), *pos = read(s.second), *seq = read(s.tile_seqs), *start = read(s.tile_starts);
      for (int64_t i = 0; i < s.seqs; ++i) {
        const int64_t q = seq[i], end = std::min<int64_t>(int64_t{start[i]} + s.q_len, cu[q + 1]);
        f(SeqRows{q, start[i], end - start[i], int64_t{pos[q]} + start[i] - cu[q], int64_t{pos[q]} + cu[q + 1] - cu[q]});
      }
      return;
    }
  }
}

}  // namespace ts::paged
