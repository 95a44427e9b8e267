#include "core/ops/paged/attention_common.h"

#include <algorithm>

#include "core/ops/core/attention_common.h"

namespace ts::paged {

using namespace describe;

Pool pool_of(const PagedPoolParams& p, Layout layout) {
  return {layout, p.num_blocks, p.num_kv_heads, p.block_size, p.head_dim, layout == Layout::Vllm ? p.x : 1};
}

std::vector<TensorDecl> pool_decls(const PagedPoolParams& p, Layout layout) {
  const Pool pool = pool_of(p, layout);
  return {in("k_pool", pool.key_shape()), in("v_pool", pool.value_shape())};
}

void infer_num_blocks(PagedPoolParams& p, const TensorMap& t, Layout layout) {
  p.num_blocks = dim_of(t, "k_pool", layout == Layout::Ferrum ? 4 : 5, 0);
}

void check_attention_params(const PagedPoolParams& p, Layout layout) {
  attn::check_gqa(p.num_heads, p.num_kv_heads, "num_heads", "num_kv_heads");
  check_pool_params(layout, p.head_dim, p.block_size, p.max_num_blocks_per_seq, p.x);
  positive(p.num_blocks, "num_blocks (k_pool's first dimension)");
}

void check_length_bound(const PagedPoolParams& p, int64_t bound, const char* name) {
  non_negative(bound, name);
  const int64_t held = checked::mul(p.max_num_blocks_per_seq, p.block_size, "max_num_blocks_per_seq * block_size");
  check(bound <= held, "parameter '{}' is {}, more than a block table holds ({} blocks of {})", name, bound,
        p.max_num_blocks_per_seq, p.block_size);
}

void check_pool_data(const PagedPoolParams& p, Layout layout, const TensorMap& t, const std::vector<int64_t>& lens) {
  check_x(layout, p.x, t.at("k_pool").dtype());
  check_tables(t.at("block_tables"), "block_tables", lens, p.max_num_blocks_per_seq, p.block_size, p.num_blocks);
}

int64_t preset_blocks(const std::vector<int64_t>& lens, int64_t block_size) { return blocks_needed(lens, block_size, 2); }

void generate_pools(const PagedPoolParams& p, Layout layout, TensorMap& t, const std::string& tables,
                    const std::vector<int64_t>& lens, Rng& r) {
  generate_block_tables(t.at(tables), lens, p.block_size, p.num_blocks, r);
  fill_pools(t.at("k_pool"), t.at("v_pool"), pool_of(p, layout), t.at(tables), lens, r);
}

SeqPlan plan(const std::vector<int64_t>& gen_lens, const std::vector<int64_t>& gen_pos, int64_t seqs, int64_t total) {
  if (!gen_lens.empty()) return {gen_lens, gen_pos.empty() ? std::vector<int64_t>(gen_lens.size(), 0) : gen_pos};
  SeqPlan p{std::vector<int64_t>(static_cast<size_t>(seqs), 0), std::vector<int64_t>(static_cast<size_t>(seqs), 0)};
  for (int64_t s = 0; s < seqs; ++s) p.lens[s] = total / seqs + (s < total % seqs ? 1 : 0);
  return p;
}

void next_step(std::vector<int64_t>& gen_lens, std::vector<int64_t>& gen_pos, bool varlen, int64_t min_len, Rng& r) {
  const bool moves = gen_pos.size() == gen_lens.size();  // each position travels with its sequence
  for (int64_t i = static_cast<int64_t>(gen_lens.size()) - 1; i > 0; --i) {
    const int64_t j = r.below(i + 1);
    std::swap(gen_lens[i], gen_lens[j]);
    if (moves) std::swap(gen_pos[i], gen_pos[j]);
  }
  for (size_t s = 0; s < gen_lens.size(); ++s) {
    if (r.below(2) == 0) continue;
    if (varlen) {
      if (moves) gen_pos[s] = r.below(gen_pos[s] + 1);
    } else if (gen_lens[s] > min_len) {
      gen_lens[s] = min_len + r.below(gen_lens[s] - min_len + 1);
    }
  }
}

void move_rows(std::vector<int64_t>& rows, const std::vector<int64_t>& pos, bool fa2, int64_t max_kv,
               int64_t max_rows, Rng& r) {
  const int64_t n = static_cast<int64_t>(rows.size());
  if (n < 2 || pos.size() != rows.size()) return;
  const int64_t from = r.below(n), to = (from + 1 + r.below(n - 1)) % n;
  const int64_t room = fa2 ? (max_rows > 0 ? max_rows - rows[to] : rows[from]) : max_kv - pos[to] - rows[to];
  const int64_t most = std::min(rows[from], room);
  if (most <= 0) return;
  const int64_t k = 1 + r.below(most);
  rows[from] -= k, rows[to] += k;
}

attn::Magnitudes magnitudes(const PagedPoolParams& p, const TensorMap& in) {
  return attn::pool_magnitudes(in, "q", "k_pool", "v_pool", p.head_dim);
}

Tolerance tolerance(const PagedPoolParams& p, DType dt, int64_t max_keys, const TensorMap& in) {
  return attn::softmax_tolerance(dt, p.head_dim, p.softmax_scale(), max_keys, magnitudes(p, in));
}

Cost cost(const PagedPoolParams& p, DType dt, double pairs, double kv_rows, double q_rows) {
  return attention_cost(pairs, kv_rows, p.head_dim, dt, 0, q_rows, dt);
}

std::vector<int64_t> lengths(const TensorMap& t, const std::string& name) { return values(t.at(name)); }

void set_lengths(Tensor& t, const std::vector<int64_t>& lens) {
  for (size_t i = 0; i < lens.size(); ++i) t.set(static_cast<int64_t>(i), static_cast<double>(lens[i]));
}

std::vector<int64_t> rows_per_sequence(const TensorMap& t, int64_t total_rows) {
  const auto cu = lengths(t, "cu_seqlens_q");
  check(!cu.empty() && cu[0] == 0, "cu_seqlens_q[0] must be 0, is {}", cu.empty() ? -1 : cu[0]);
  std::vector<int64_t> rows(cu.size() - 1);
  for (size_t s = 0; s + 1 < cu.size(); ++s) {
    check(cu[s + 1] >= cu[s], "cu_seqlens_q is not non-decreasing: [{}] = {} after [{}] = {}", s + 1, cu[s + 1], s,
          cu[s]);
    rows[s] = cu[s + 1] - cu[s];
  }
  check(cu.back() == total_rows, "cu_seqlens_q ends at {}, not at the {} query rows", cu.back(), total_rows);
  return rows;
}

std::vector<uint8_t> tiled_rows(const TensorMap& t, int64_t num_tiles) {
  const auto cu = lengths(t, "cu_seqlens_q");
  const auto seqs = lengths(t, "tile_seqs"), starts = lengths(t, "tile_starts");
  std::vector<uint8_t> rows(static_cast<size_t>(cu.back()), 0);
  for (int64_t i = 0; i < num_tiles; ++i)
    for (int64_t r = starts[i]; r < std::min(starts[i] + 4, cu[seqs[i] + 1]); ++r) rows[r] = 1;
  return rows;
}

}  // namespace ts::paged
