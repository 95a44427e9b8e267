// paged_batched_decode_attention: one query token per sequence, q [num_seqs, nh, hd], sequence s
// attending to its kv positions [0, valid_kv_lens[s]) through its block table (ferrum pools).
#include <algorithm>

#include "core/ops/paged/attention_common.h"
#include "core/ops/paged/attention_view.h"

namespace ts {
using namespace describe;
using paged::Layout;

namespace {

using P = PagedBatchedDecodeParams;

// The preset's kv lengths, else every sequence as long as max_kv_len and its table allow.
std::vector<int64_t> kv_lens(const P& p) {
  if (!p.gen_lens.empty()) return p.gen_lens;
  return std::vector<int64_t>(static_cast<size_t>(p.num_seqs), std::min(p.max_kv_len, p.max_num_blocks_per_seq * p.block_size));
}

P batched(int64_t nh, int64_t nkv, int64_t hd, int64_t bs, std::vector<int64_t> lens) {
  P p;
  p.num_seqs = static_cast<int64_t>(lens.size());
  p.num_heads = nh, p.num_kv_heads = nkv, p.head_dim = hd, p.block_size = bs;
  const paged::TableSize ts = paged::table_size(lens, bs);
  p.max_num_blocks_per_seq = ts.width, p.max_kv_len = ts.longest;
  p.num_blocks = paged::preset_blocks(lens, bs);
  p.gen_lens = std::move(lens);
  return p;
}

}  // namespace

const Op& op_paged_batched_decode_attention() {
  static const TypedOp<P> op({
      .name = "paged_batched_decode_attention",
      .family = "paged",
      .summary = "batched decode: q [S,nh,hd], sequence s sees kv [0, valid_kv_lens[s]) through block_tables",
      .tensors = [](const P& p) {
        std::vector<TensorDecl> d{in("q", {p.num_seqs, p.num_heads, p.head_dim})};
        for (auto& pool : paged::pool_decls(p, Layout::Ferrum)) d.push_back(std::move(pool));
        d.push_back(pinned(in("block_tables", {p.num_seqs, p.max_num_blocks_per_seq}), DType::U32));
        d.push_back(pinned(in("valid_kv_lens", {p.num_seqs}), DType::U32));
        d.push_back(out("out", {p.num_seqs, p.num_heads, p.head_dim}));
        return d;
      },
      .validate_params = [](const P& p) {
        positive(p.num_seqs, "num_seqs");
        paged::check_attention_params(p, Layout::Ferrum);
        paged::check_length_bound(p, p.max_kv_len, "max_kv_len");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        const auto lens = paged::lengths(t, "valid_kv_lens");
        for (size_t s = 0; s < lens.size(); ++s)
          check(lens[s] <= p.max_kv_len, "valid_kv_lens[{}] = {} exceeds max_kv_len {}", s, lens[s], p.max_kv_len);
        paged::check_pool_data(p, Layout::Ferrum, t, lens);
      },
      .infer = [](P& p, const TensorMap& t) { paged::infer_num_blocks(p, t, Layout::Ferrum); },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        const std::vector<int64_t> lens = kv_lens(p);
        normal(t.at("q"), r);
        paged::set_lengths(t.at("valid_kv_lens"), lens);
        paged::generate_pools(p, Layout::Ferrum, t, "block_tables", lens, r);
      },
      .next_step = [](P& p, Rng& r) { paged::next_step(p.gen_lens, p.gen_pos, false, 0, r); },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return paged::tolerance(p, dt, p.max_kv_len, in); },
      .cost = [](const P& p, DType dt) {
        double keys = 0;
        for (int64_t len : kv_lens(p)) keys += static_cast<double>(len);
        return paged::cost(p, dt, keys * static_cast<double>(p.num_heads), keys * static_cast<double>(p.num_kv_heads),
                           static_cast<double>(p.num_seqs * p.num_heads));
      },
      .view = [](const P& p) {
        return std::any(paged::decode_view(p, Layout::Ferrum, p.num_seqs, 1, "valid_kv_lens", p.max_kv_len));
      },
      .cases = {
          {"bs16_gqa4_hd128_boundaries", Tier::Smoke, batched(8, 2, 128, 16, {32, 33, 1, 16})},
          {"bs1_gqa1_hd64_zero_len", Tier::Ci, batched(2, 2, 64, 1, {0, 7, 3})},
          {"bs32_gqa8_hd256", Tier::Ci, batched(8, 1, 256, 32, {64, 65, 31})},
          {"very_different_lengths_bs16_hd64", Tier::Ci, batched(4, 1, 64, 16, {400, 1, 0, 129, 16})},
      },
      .benches = {
          {"llama3_8b_b8_ctx4096", Tier::Full, batched(32, 8, 128, 16, std::vector<int64_t>(8, 4096))},
          {"llama3_8b_b32_ctx1024", Tier::Full, batched(32, 8, 128, 16, std::vector<int64_t>(32, 1024))},
      },
  });
  return op;
}

}  // namespace ts
