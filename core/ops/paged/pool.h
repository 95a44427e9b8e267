#pragma once
// The KV pools of the paged and kv families (docs/catalog.md, "Family paged"): their two layouts, the address
// of one element, block tables that are random permutations, pools whose unused slots hold NaN, and
// the checks every paged op runs on its block tables and lengths.
#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/describe.h"

namespace ts::paged {

// ferrum: k and v pools [num_blocks, kv_heads, block_size, head_dim]. vllm: key cache
// [num_blocks, kv_heads, head_dim / x, block_size, x], value cache [num_blocks, kv_heads, head_dim,
// block_size].
enum class Layout { Ferrum, Vllm };

struct Pool {
  Layout layout = Layout::Ferrum;
  int64_t num_blocks = 1, kv_heads = 1, block_size = 1, head_dim = 1, x = 1;

  Shape key_shape() const;
  Shape value_shape() const;
  // Element index of channel d of the key (value) of slot s of physical block b, kv head h.
  int64_t key_index(int64_t b, int64_t h, int64_t s, int64_t d) const {
    if (layout == Layout::Ferrum) return ((b * kv_heads + h) * block_size + s) * head_dim + d;
    return (((b * kv_heads + h) * (head_dim / x) + d / x) * block_size + s) * x + d % x;
  }
  int64_t value_index(int64_t b, int64_t h, int64_t s, int64_t d) const {
    if (layout == Layout::Ferrum) return key_index(b, h, s, d);
    return ((b * kv_heads + h) * head_dim + d) * block_size + s;
  }
  int64_t slots() const { return num_blocks * block_size; }
};

// vLLM's x: 16 bytes of pool elements.
int64_t vllm_x(DType pool_dtype);

// Layout checks on the parameters: positive sizes, head_dim a multiple of x for vllm (x given).
void check_pool_params(Layout layout, int64_t head_dim, int64_t block_size, int64_t max_blocks, int64_t x);
// x must be vLLM's for the pool's dtype (a case file may carry any x).
void check_x(Layout layout, int64_t x, DType pool_dtype);

// A sequence's view of the pools: where its logical position p lives.
struct SeqBlocks {
  const uint32_t* table;  // physical block of each logical block
  int64_t block_size;
  int64_t block(int64_t p) const { return table[p / block_size]; }
  int64_t slot(int64_t p) const { return p % block_size; }
};

// Block tables [rows, width] (U32) for sequences of kv lengths `lens`: the blocks the sequences use
// are a random permutation of distinct physical blocks (never the identity), and the entries past a
// sequence's last block point at blocks nobody uses, which hold NaN. Needs num_blocks >= the blocks
// used + 1.
void generate_block_tables(Tensor& tables, const std::vector<int64_t>& lens, int64_t block_size, int64_t num_blocks,
                           Rng& r);
// Every slot of every pool starts as NaN; then each sequence's positions [0, len) get N(0,1) values
// through its table (keys and values of a whole kv head at a time).
void fill_pools(Tensor& k, Tensor& v, const Pool& pool, const Tensor& tables, const std::vector<int64_t>& lens,
                Rng& r);
// A preset's table width: the longest sequence's blocks plus one (an entry past every sequence's end,
// pointing at a NaN block), and the longest length.
struct TableSize {
  int64_t width = 0, longest = 0;
};
TableSize table_size(const std::vector<int64_t>& lens, int64_t block_size);
// The number of physical blocks sequences of lengths `lens` need, plus `spare` unused ones.
int64_t blocks_needed(const std::vector<int64_t>& lens, int64_t block_size, int64_t spare);

// Bad-input checks: each sequence's length fits its table (len <= width * block_size), and every
// entry a sequence reads (its first ceil(len / block_size)) lies in [0, num_blocks).
void check_tables(const Tensor& tables, const std::string& name, const std::vector<int64_t>& lens, int64_t width,
                  int64_t block_size, int64_t num_blocks);
// A U32 tensor's values as int64s.
std::vector<int64_t> values(const Tensor& t);

// The cost of attending `pairs` (query row, key) pairs of head_dim over `kv_rows` (token, kv head)
// rows read of pool dtype `pool_dt` (plus `scale_bytes` per row for quantized pools).
Cost attention_cost(double pairs, double kv_rows, int64_t head_dim, DType pool_dt, double scale_bytes, double q_rows,
                    DType act_dt);

}  // namespace ts::paged
