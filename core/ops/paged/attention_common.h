#pragma once
// What the paged attention ops share: their pools' tensors and geometry, parameter and data checks,
// the generator of block tables, lengths and pools, the tolerance and the cost.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/core/attention_common.h"
#include "core/ops/paged/pool.h"
#include "core/ops/paged_params.h"

namespace ts::paged {

Pool pool_of(const PagedPoolParams& p, Layout layout);
// k_pool and v_pool in the case's activation dtype.
std::vector<TensorDecl> pool_decls(const PagedPoolParams& p, Layout layout);
// num_blocks from k_pool's first dimension.
void infer_num_blocks(PagedPoolParams& p, const TensorMap& t, Layout layout);
// GQA, positive sizes, vLLM's x.
void check_attention_params(const PagedPoolParams& p, Layout layout);
// A length bound a case states (max_seq_len, max_kv_len) is at most what a block table holds
// (max_num_blocks_per_seq x block_size): no tensor's shape bounds it otherwise, and it sizes a
// device's key split and the attention tolerance's key count.
void check_length_bound(const PagedPoolParams& p, int64_t bound, const char* name);
// Before the tables are read: x matches the pool dtype, the tables' entries that lengths `lens` use
// are in range and the lengths fit the tables.
void check_pool_data(const PagedPoolParams& p, Layout layout, const TensorMap& t, const std::vector<int64_t>& lens);

// Block tables (name `tables`), random permutations, and pools holding N(0,1) at the positions
// [0, lens[s]) of each sequence and NaN everywhere else.
void generate_pools(const PagedPoolParams& p, Layout layout, TensorMap& t, const std::string& tables,
                    const std::vector<int64_t>& lens, Rng& r);
// A preset's pool size: the blocks its sequences use plus two nobody uses (stray reads land on NaN).
int64_t preset_blocks(const std::vector<int64_t>& lens, int64_t block_size);

// A preset's rows (or kv lengths) and positions per sequence; for parameters that come from elsewhere
// (a case file's, the CLI's), `total` spread evenly over `seqs` sequences, all from position 0.
struct SeqPlan {
  std::vector<int64_t> lens, pos;
};
SeqPlan plan(const std::vector<int64_t>& gen_lens, const std::vector<int64_t>& gen_pos, int64_t seqs, int64_t total);

// Another step of a preset's sequences (OpDef::next_step): the (length, position) pairs shuffled among
// the sequences, then, each with probability 1/2, a decode kv length cut to at least `min_len`, or (a
// varlen batch: gen_lens are query rows, kept) a position (pos_offsets, seq_lens) cut. Every bound the
// parameters state still holds: the longest length, position and their sum, the rows in all, the
// blocks the tables use.
void next_step(std::vector<int64_t>& gen_lens, std::vector<int64_t>& gen_pos, bool varlen, int64_t min_len, Rng& r);

// A ragged batch's other step (before next_step): k query rows moved from one sequence to another, the
// rows in all kept, within the bounds the parameters state: the receiving sequence's kv (its position
// plus its rows) at most max_kv, or (FlashAttention-2, kv = seq_lens) its rows at most max_rows. The
// longest sequence can then grow, as a later step's may; the tables' blocks grow by one at most
// (preset pools hold two spare).
void move_rows(std::vector<int64_t>& rows, const std::vector<int64_t>& pos, bool fa2, int64_t max_kv,
               int64_t max_rows, Rng& r);

// The magnitudes of a case's q, k_pool and v_pool (attn::pool_magnitudes).
attn::Magnitudes magnitudes(const PagedPoolParams& p, const TensorMap& in);
// The softmax attention tolerance over at most `max_keys` keys, from the case's magnitudes.
Tolerance tolerance(const PagedPoolParams& p, DType dt, int64_t max_keys, const TensorMap& in);

// Attention over a pool of the case's dtype: `pairs` visible (query head row, key) pairs, `kv_rows`
// (position, kv head) rows read, `q_rows` query head rows.
Cost cost(const PagedPoolParams& p, DType dt, double pairs, double kv_rows, double q_rows);

// vLLM's key cache interleaves x = 16 bytes of elements: 4 for F32, 8 for F16 / BF16. Each preset of
// a _vllm op becomes one per x, named by it.
template <class P> std::vector<Preset<P>> per_x(const std::vector<Preset<P>>& presets) {
  std::vector<Preset<P>> out;
  for (const auto& c : presets) {
    Preset<P> f32 = c, half = c;
    f32.name += "_x4", f32.params.x = 4, f32.dtypes = {DType::F32};
    half.name += "_x8", half.params.x = 8, half.dtypes = {DType::F16, DType::BF16};
    out.push_back(f32), out.push_back(half);
  }
  return out;
}

// A U32 [n] tensor as lengths (context_lens, valid_kv_lens, seq_lens).
std::vector<int64_t> lengths(const TensorMap& t, const std::string& name);
void set_lengths(Tensor& t, const std::vector<int64_t>& lens);
// Query rows per sequence from cu_seqlens_q, after checking it starts at 0, never decreases and ends
// at `total_rows`.
std::vector<int64_t> rows_per_sequence(const TensorMap& t, int64_t total_rows);
// A varlen sequence of `rows` query rows: its kv length and the position of its first row, from its
// pos_offsets entry (rows at pos + i, kv pos + rows) or, FlashAttention-2, its seq_lens entry (rows
// aligned to the kv's end: at seq_len - rows + i; a negative first leaves the early rows no key).
// Row i sees keys [0, first + i + 1).
struct SeqSpan {
  int64_t kv, first;
};
inline SeqSpan seq_span(bool fa2, int64_t rows, int64_t second) {
  return fa2 ? SeqSpan{second, second - rows} : SeqSpan{second + rows, second};
}
// _vllm_tiled_q4's rows: 1 for each query row a tile covers (tile i is rows tile_starts[i] .. + 4 of
// sequence tile_seqs[i], cut at the sequence's end), 0 for the rest, which the op leaves unwritten.
std::vector<uint8_t> tiled_rows(const TensorMap& t, int64_t num_tiles);

}  // namespace ts::paged
