#include "core/ops/paged/pool.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace ts::paged {

Shape Pool::key_shape() const {
  if (layout == Layout::Ferrum) return {num_blocks, kv_heads, block_size, head_dim};
  return {num_blocks, kv_heads, head_dim / x, block_size, x};
}

Shape Pool::value_shape() const {
  if (layout == Layout::Ferrum) return {num_blocks, kv_heads, block_size, head_dim};
  return {num_blocks, kv_heads, head_dim, block_size};
}

int64_t vllm_x(DType pool_dtype) { return 16 / static_cast<int64_t>(dtype_size(pool_dtype)); }

void check_pool_params(Layout layout, int64_t head_dim, int64_t block_size, int64_t max_blocks, int64_t x) {
  describe::positive(head_dim, "head_dim");
  describe::positive(block_size, "block_size");
  describe::positive(max_blocks, "max_num_blocks_per_seq");
  if (layout == Layout::Vllm) {
    check(x > 0, "parameter 'x' (vLLM's key interleave, 16 / element bytes) must be given and positive, is {}", x);
    describe::multiple_of(head_dim, x, "head_dim (vLLM's key cache splits it into head_dim / x groups of x)");
  }
}

void check_x(Layout layout, int64_t x, DType pool_dtype) {
  if (layout != Layout::Vllm) return;
  check(x == vllm_x(pool_dtype), "parameter 'x' is {}, but vLLM's key cache of {} interleaves {} elements (16 bytes)",
        x, dtype_name(pool_dtype), vllm_x(pool_dtype));
}

TableSize table_size(const std::vector<int64_t>& lens, int64_t block_size) {
  TableSize t;
  for (int64_t len : lens) t.width = std::max(t.width, (len + block_size - 1) / block_size), t.longest = std::max(t.longest, len);
  t.width += 1;
  return t;
}

int64_t blocks_needed(const std::vector<int64_t>& lens, int64_t block_size, int64_t spare) {
  int64_t n = spare;
  for (int64_t len : lens) n += (len + block_size - 1) / block_size;
  return n;
}

void generate_block_tables(Tensor& tables, const std::vector<int64_t>& lens, int64_t block_size, int64_t num_blocks,
                           Rng& r) {
  const int64_t used = blocks_needed(lens, block_size, 0);
  check(used < num_blocks, "paged generator: {} blocks in use need a pool of more than {} blocks", used, num_blocks);
  // A shuffled list of every physical block: the sequences take its first `used`, in order, so no
  // table is the identity (unless the shuffle happens to be, which is re-drawn).
  std::vector<int64_t> perm(static_cast<size_t>(num_blocks));
  std::iota(perm.begin(), perm.end(), 0);
  do {
    for (int64_t i = num_blocks - 1; i > 0; --i) std::swap(perm[i], perm[r.below(i + 1)]);
  } while (num_blocks > 2 && std::is_sorted(perm.begin(), perm.begin() + std::max<int64_t>(used, 2)));
  const int64_t width = tables.numel() / static_cast<int64_t>(std::max<size_t>(lens.size(), 1));
  int64_t next = 0;
  for (size_t s = 0; s < lens.size(); ++s) {
    const int64_t nb = (lens[s] + block_size - 1) / block_size;
    for (int64_t i = 0; i < width; ++i) {
      // Entries past the sequence's blocks: blocks nobody uses (all NaN), so a read past the end shows.
      const int64_t b = i < nb ? perm[next + i] : perm[used + r.below(num_blocks - used)];
      tables.set(static_cast<int64_t>(s) * width + i, static_cast<double>(b));
    }
    next += nb;
  }
}

void fill_pools(Tensor& k, Tensor& v, const Pool& pool, const Tensor& tables, const std::vector<int64_t>& lens,
                Rng& r) {
  k.fill(std::numeric_limits<double>::quiet_NaN());
  v.fill(std::numeric_limits<double>::quiet_NaN());
  const auto t = values(tables);
  const int64_t width = static_cast<int64_t>(t.size()) / static_cast<int64_t>(std::max<size_t>(lens.size(), 1));
  for (size_t s = 0; s < lens.size(); ++s)
    for (int64_t p = 0; p < lens[s]; ++p) {
      const int64_t b = t[s * width + p / pool.block_size], slot = p % pool.block_size;
      for (int64_t h = 0; h < pool.kv_heads; ++h)
        for (int64_t d = 0; d < pool.head_dim; ++d) {
          k.set(pool.key_index(b, h, slot, d), r.normal());
          v.set(pool.value_index(b, h, slot, d), r.normal());
        }
    }
}

std::vector<int64_t> values(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<int64_t>(t.get(i));
  return v;
}

void check_tables(const Tensor& tables, const std::string& name, const std::vector<int64_t>& lens, int64_t width,
                  int64_t block_size, int64_t num_blocks) {
  const auto t = values(tables);
  check(block_size > 0, "{}: block_size must be positive, is {}", name, block_size);
  for (size_t s = 0; s < lens.size(); ++s) {
    check(lens[s] >= 0, "{}: sequence {} has a negative kv length {}", name, s, lens[s]);
    // The blocks the sequence reads, ceil(len / block_size), without len + block_size - 1 (which wraps
    // near 2^63), against the table's width, without width * block_size (which wraps too).
    const int64_t nb = lens[s] / block_size + (lens[s] % block_size != 0 ? 1 : 0);
    check(nb <= width, "{}: sequence {} has {} kv positions, more than its {} blocks of {} hold", name, s, lens[s],
          width, block_size);
    for (int64_t i = 0; i < nb; ++i) {
      const int64_t b = t[s * width + i];
      check(b >= 0 && b < num_blocks, "{}[{}][{}] = {} is outside the pool's [0, {}) blocks", name, s, i, b,
            num_blocks);
    }
  }
}

Cost attention_cost(double pairs, double kv_rows, int64_t head_dim, DType pool_dt, double scale_bytes, double q_rows,
                    DType act_dt) {
  const double hd = static_cast<double>(head_dim);
  const double kv_bytes = 2 * kv_rows * (describe::bytes(pool_dt, hd) + scale_bytes);
  return Cost{4.0 * pairs * hd, kv_bytes + describe::bytes(act_dt, 2 * q_rows * hd)};
}

}  // namespace ts::paged
