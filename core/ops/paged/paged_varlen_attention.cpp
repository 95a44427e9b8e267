// paged_varlen_attention (+ _vllm, _vllm_tiled_q4) and paged_varlen_attention_fa2_ffi: a ragged batch
// of sequences, each attending causally to its own kv in the pools. Sequence s owns query rows
// cu_seqlens_q[s] .. cu_seqlens_q[s+1]; its row i sits at pos_offsets[s] + i (its kv length is
// pos_offsets[s] plus its rows), or for _fa2_ffi at seq_lens[s] - rows + i (queries aligned to the end
// of the kv, with the log-sum-exp of each row's scores beside the output). _vllm reads vLLM's pools;
// _vllm_tiled_q4 too, one tile of up to 4 rows of one sequence at a time, as the tile list says.
#include <algorithm>
#include <numeric>

#include "core/ops/paged/attention_common.h"
#include "core/ops/paged/attention_view.h"

namespace ts {
using namespace describe;
using paged::Layout;

namespace {

// How a sequence's kv length and its rows' positions follow from its second per-sequence tensor.
enum class Align { PosOffsets, SeqLensFa2 };

const char* lens_name(Align a) { return a == Align::PosOffsets ? "pos_offsets" : "seq_lens"; }

// Each sequence's kv length, from its query rows and pos_offsets or seq_lens.
std::vector<int64_t> kv_lengths(Align a, const std::vector<int64_t>& rows, const std::vector<int64_t>& second) {
  std::vector<int64_t> kv(rows.size());
  for (size_t s = 0; s < rows.size(); ++s) kv[s] = paged::seq_span(a == Align::SeqLensFa2, rows[s], second[s]).kv;
  return kv;
}

// Visible (row, key) pairs: row i of n sees [0, first + i + 1) keys, first = pos_offsets[s] or
// seq_lens[s] - n (negative: the first rows see nothing).
double visible_pairs(Align a, const std::vector<int64_t>& rows, const std::vector<int64_t>& second) {
  double pairs = 0;
  for (size_t s = 0; s < rows.size(); ++s) {
    const int64_t first = paged::seq_span(a == Align::SeqLensFa2, rows[s], second[s]).first;
    for (int64_t i = 0; i < rows[s]; ++i) pairs += static_cast<double>(std::max<int64_t>(0, first + i + 1));
  }
  return pairs;
}

// The checks every varlen op runs on its data; returns each sequence's kv length.
std::vector<int64_t> check_varlen(const PagedPoolParams& p, Layout layout, Align a, const TensorMap& t,
                                  int64_t total_q, int64_t max_kv_len, int64_t max_q_len) {
  const std::vector<int64_t> rows = paged::rows_per_sequence(t, total_q);
  const std::vector<int64_t> kv = kv_lengths(a, rows, paged::lengths(t, lens_name(a)));
  for (size_t s = 0; s < rows.size(); ++s) {
    check(kv[s] <= max_kv_len, "sequence {}'s kv length {} exceeds max_kv_len {}", s, kv[s], max_kv_len);
    if (max_q_len) check(rows[s] <= max_q_len, "sequence {} has {} query rows, more than max_q_len {}", s, rows[s], max_q_len);
  }
  paged::check_pool_data(p, layout, t, kv);
  return kv;
}

std::vector<TensorDecl> varlen_tensors(const PagedPoolParams& p, Layout layout, Align a, int64_t num_seqs,
                                       int64_t total_q) {
  std::vector<TensorDecl> d{in("q", {total_q, p.num_heads, p.head_dim})};
  for (auto& pool : paged::pool_decls(p, layout)) d.push_back(std::move(pool));
  d.push_back(pinned(in("cu_seqlens_q", {checked::add(num_seqs, 1, "num_seqs + 1")}), DType::U32));
  d.push_back(pinned(in(lens_name(a), {num_seqs}), DType::U32));
  d.push_back(pinned(in("block_tables", {num_seqs, p.max_num_blocks_per_seq}), DType::U32));
  d.push_back(out("out", {total_q, p.num_heads, p.head_dim}));
  if (a == Align::SeqLensFa2) d.push_back(pinned(out("lse", {p.num_heads, total_q}), DType::F32));
  return d;
}

// A varlen op's rows and positions: the preset's, else the rows spread evenly, every sequence from
// position 0 (or, FlashAttention-2, with as many kv positions as rows).
paged::SeqPlan varlen_plan(const PagedPoolParams& p, Align a, int64_t num_seqs, int64_t total_q) {
  paged::SeqPlan plan = paged::plan(p.gen_lens, p.gen_pos, num_seqs, total_q);
  if (p.gen_lens.empty() && a == Align::SeqLensFa2) plan.pos = plan.lens;
  return plan;
}

void generate_varlen(const PagedPoolParams& p, Layout layout, Align a, int64_t num_seqs, int64_t total_q, TensorMap& t,
                     Rng& r) {
  const paged::SeqPlan plan = varlen_plan(p, a, num_seqs, total_q);
  const std::vector<int64_t>& rows = plan.lens;
  std::vector<int64_t> cu(rows.size() + 1, 0);
  std::partial_sum(rows.begin(), rows.end(), cu.begin() + 1);
  normal(t.at("q"), r);
  paged::set_lengths(t.at("cu_seqlens_q"), cu);
  paged::set_lengths(t.at(lens_name(a)), plan.pos);
  paged::generate_pools(p, layout, t, "block_tables", kv_lengths(a, rows, plan.pos), r);
}

Cost varlen_cost(const PagedPoolParams& p, Align a, int64_t num_seqs, int64_t total_q, DType dt) {
  const paged::SeqPlan plan = varlen_plan(p, a, num_seqs, total_q);
  const auto kv = kv_lengths(a, plan.lens, plan.pos);
  const double kv_rows = static_cast<double>(std::accumulate(kv.begin(), kv.end(), int64_t{0}) * p.num_kv_heads);
  return paged::cost(p, dt, visible_pairs(a, plan.lens, plan.pos) * static_cast<double>(p.num_heads), kv_rows,
                     static_cast<double>(total_q * p.num_heads));
}

// A preset: heads, head_dim, block size, each sequence's query rows and pos_offsets (or seq_lens).
PagedVarlenParams varlen(Align a, int64_t nh, int64_t nkv, int64_t hd, int64_t bs, std::vector<int64_t> rows,
                         std::vector<int64_t> second) {
  PagedVarlenParams p;
  p.num_seqs = static_cast<int64_t>(rows.size());
  p.total_q_tokens = std::accumulate(rows.begin(), rows.end(), int64_t{0});
  p.num_heads = nh, p.num_kv_heads = nkv, p.head_dim = hd, p.block_size = bs;
  const auto kv = kv_lengths(a, rows, second);
  const paged::TableSize ts = paged::table_size(kv, bs);
  p.max_num_blocks_per_seq = ts.width, p.max_kv_len = ts.longest;
  if (a == Align::SeqLensFa2) p.max_q_len = *std::max_element(rows.begin(), rows.end());
  p.num_blocks = paged::preset_blocks(kv, bs);
  p.gen_lens = std::move(rows), p.gen_pos = std::move(second);
  return p;
}

std::vector<Preset<PagedVarlenParams>> varlen_cases(Align a) {
  const bool fa2 = a == Align::SeqLensFa2;
  auto v = [a](auto... args) { return varlen(a, args...); };
  std::vector<Preset<PagedVarlenParams>> c{
      // Three sequences of different lengths; the second a decode row at the end of a block.
      {"mixed3_bs16_gqa4_hd128", Tier::Smoke, v(8, 2, 128, 16, std::vector<int64_t>{3, 1, 6},
                                               fa2 ? std::vector<int64_t>{3, 32, 16} : std::vector<int64_t>{0, 31, 10})},
      // An empty sequence between two others; blocks of one slot.
      {"empty_sequence_bs1_gqa1_hd64", Tier::Ci, v(4, 4, 64, 1, std::vector<int64_t>{2, 0, 3},
                                                 fa2 ? std::vector<int64_t>{6, 5, 3} : std::vector<int64_t>{4, 5, 0})},
      {"bs32_gqa8_hd256", Tier::Ci, v(8, 1, 256, 32, std::vector<int64_t>{4, 33},
                                      fa2 ? std::vector<int64_t>{64, 33} : std::vector<int64_t>{60, 0})},
      // kv lengths ending on a block boundary and one past it.
      {"boundaries_bs16_gqa1_hd64", Tier::Ci, v(2, 2, 64, 16, std::vector<int64_t>{16, 17},
                                               fa2 ? std::vector<int64_t>{16, 33} : std::vector<int64_t>{0, 16})},
      {"very_different_lengths_bs16_gqa4_hd64", Tier::Ci,
       v(4, 1, 64, 16, std::vector<int64_t>{1, 70, 9, 0, 33},
         fa2 ? std::vector<int64_t>{200, 70, 17, 0, 40} : std::vector<int64_t>{199, 0, 8, 3, 7})},
  };
  // FlashAttention-2 alignment: fewer kv positions than query rows leaves the first rows with no key
  // (zeros, lse -inf); a zero seq_len leaves the whole sequence so.
  if (fa2) c.push_back({"kv_shorter_than_rows_bs16_hd64", Tier::Ci, v(2, 1, 64, 16, std::vector<int64_t>{5, 3},
                                                                       std::vector<int64_t>{3, 0})});
  return c;
}

// Llama-3-8B prefill of seven sequences of 17 to 900 tokens from position 0.
PagedVarlenParams llama3_mixed7(Align a) {
  const std::vector<int64_t> rows{17, 900, 64, 333, 128, 511, 40};
  return varlen(a, 32, 8, 128, 16, rows, a == Align::PosOffsets ? std::vector<int64_t>(rows.size(), 0) : rows);
}

OpDef<PagedVarlenParams> varlen_op(std::string name, Layout layout, Align a, std::string summary) {
  using P = PagedVarlenParams;
  const bool vllm = layout == Layout::Vllm;
  std::vector<Preset<P>> benches{{"llama3_8b_mixed7", Tier::Full, llama3_mixed7(a)}};
  OpDef<P> d{
      .name = std::move(name),
      .family = "paged",
      .summary = std::move(summary),
      .tensors = [layout, a](const P& p) { return varlen_tensors(p, layout, a, p.num_seqs, p.total_q_tokens); },
      .validate_params = [layout, a](const P& p) {
        positive(p.num_seqs, "num_seqs");
        non_negative(p.total_q_tokens, "total_q_tokens");
        if (a == Align::SeqLensFa2) positive(p.max_q_len, "max_q_len");
        paged::check_attention_params(p, layout);
        paged::check_length_bound(p, p.max_kv_len, "max_kv_len");
      },
      .validate_data = [layout, a](const P& p, const TensorMap& t) {
        check_varlen(p, layout, a, t, p.total_q_tokens, p.max_kv_len, p.max_q_len);
      },
      .infer = [layout](P& p, const TensorMap& t) { paged::infer_num_blocks(p, t, layout); },
      .generate = [layout, a](const P& p, TensorMap& t, Rng& r) {
        generate_varlen(p, layout, a, p.num_seqs, p.total_q_tokens, t, r);
      },
      .next_step = [a](P& p, Rng& r) {
        paged::move_rows(p.gen_lens, p.gen_pos, a == Align::SeqLensFa2, p.max_kv_len, p.max_q_len, r);
        paged::next_step(p.gen_lens, p.gen_pos, true, 0, r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return paged::tolerance(p, dt, p.max_kv_len, in); },
      .cost = [a](const P& p, DType dt) { return varlen_cost(p, a, p.num_seqs, p.total_q_tokens, dt); },
      .view = [layout, a](const P& p) {
        return std::any(paged::varlen_view(p, layout, a == Align::SeqLensFa2, p.num_seqs, p.total_q_tokens, p.max_kv_len));
      },
      .cases = vllm ? paged::per_x(varlen_cases(a)) : varlen_cases(a),
      .benches = vllm ? paged::per_x(benches) : benches,
  };
  // lse = log sum exp(logits) moves by at most the logits' largest error ds (it is 1-Lipschitz in
  // them), plus the F32 sum's relative error (8 sqrt(keys) + 4) u32 (log(1 + e) <= e); 2 u32 relative
  // for rounding the F32 result.
  if (a == Align::SeqLensFa2)
    d.outputs.push_back({"lse", [](const P& p, DType, const TensorMap& in) {
                           const attn::Magnitudes m = paged::magnitudes(p, in);
                           const auto [logit_max, ds] = attn::logit_error(p.head_dim, p.softmax_scale(), m);
                           const double keys = static_cast<double>(std::max<int64_t>(p.max_kv_len, 1));
                           const double sum = (8 * std::sqrt(keys) + 4) * 0x1p-24;
                           return Tolerance{ds + sum, 0x1p-23,
                                            fmt::format("lse: logits <= |scale| |q| |k| = {:.3g} off by <= {:.3g} ({}), "
                                                        "+ the F32 sum over {} keys {:.3g} abs + 2 u32 rel",
                                                        logit_max, ds, m.what, p.max_kv_len, sum)};
                         }, {}});
  return d;
}

}  // namespace

const Op& op_paged_varlen_attention() {
  static const TypedOp<PagedVarlenParams> op(varlen_op(
      "paged_varlen_attention", Layout::Ferrum, Align::PosOffsets,
      "ragged batch over ferrum pools: row i of sequence s at pos_offsets[s] + i attends causally to its own kv"));
  return op;
}

const Op& op_paged_varlen_attention_vllm() {
  static const TypedOp<PagedVarlenParams> op(varlen_op(
      "paged_varlen_attention_vllm", Layout::Vllm, Align::PosOffsets,
      "paged_varlen_attention over vLLM's pools (key [nb,nkv,hd/x,bs,x], value [nb,nkv,hd,bs])"));
  return op;
}

const Op& op_paged_varlen_attention_fa2_ffi() {
  static const TypedOp<PagedVarlenParams> op(varlen_op(
      "paged_varlen_attention_fa2_ffi", Layout::Ferrum, Align::SeqLensFa2,
      "ragged batch, kv lengths seq_lens, queries aligned to the kv's end (FlashAttention-2); also lse F32 [nh,total_q]"));
  return op;
}

// _vllm_tiled_q4: the output rows no tile covers are not written (and not compared).
const Op& op_paged_varlen_attention_vllm_tiled_q4() {
  using P = PagedVarlenTiledParams;
  auto tiled = [](const Preset<PagedVarlenParams>& c) {
    Preset<P> t{c.name, c.tier, {}, c.dtypes};
    static_cast<PagedPoolParams&>(t.params) = c.params;
    t.params.num_seqs = c.params.num_seqs, t.params.total_q_tokens = c.params.total_q_tokens;
    t.params.max_kv_len = c.params.max_kv_len;
    for (int64_t rows : c.params.gen_lens) t.params.num_tiles += (rows + 3) / 4;
    t.params.num_tiles -= 1;  // the count started at 1 (the struct's default)
    return t;
  };
  std::vector<Preset<P>> cases, benches;
  for (const auto& c : paged::per_x(varlen_cases(Align::PosOffsets))) cases.push_back(tiled(c));
  for (const auto& c : paged::per_x(std::vector<Preset<PagedVarlenParams>>{
           {"llama3_8b_mixed7", Tier::Full, llama3_mixed7(Align::PosOffsets)}}))
    benches.push_back(tiled(c));
  static const TypedOp<P> op({
      .name = "paged_varlen_attention_vllm_tiled_q4",
      .family = "paged",
      .summary = "paged_varlen_attention_vllm over a tile list: tile t is up to 4 rows of sequence tile_seqs[t] from row tile_starts[t]",
      .tensors = [](const P& p) {
        auto d = varlen_tensors(p, Layout::Vllm, Align::PosOffsets, p.num_seqs, p.total_q_tokens);
        d.push_back(pinned(in("tile_seqs", {p.num_tiles}), DType::U32));
        d.push_back(pinned(in("tile_starts", {p.num_tiles}), DType::U32));
        return d;
      },
      .validate_params = [](const P& p) {
        non_negative(p.num_tiles, "num_tiles");
        paged::check_attention_params(p, Layout::Vllm);
        paged::check_length_bound(p, p.max_kv_len, "max_kv_len");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        check_varlen(p, Layout::Vllm, Align::PosOffsets, t, p.total_q_tokens, p.max_kv_len, 0);
        const auto cu = paged::lengths(t, "cu_seqlens_q");
        const auto seqs = paged::lengths(t, "tile_seqs"), starts = paged::lengths(t, "tile_starts");
        for (int64_t i = 0; i < p.num_tiles; ++i) {
          const int64_t s = seqs[i];
          check(s >= 0 && s < p.num_seqs, "tile_seqs[{}] = {} is outside [0, {})", i, s, p.num_seqs);
          check(starts[i] >= cu[s] && starts[i] < cu[s + 1], "tile_starts[{}] = {} is not a row of sequence {} ([{}, {}))",
                i, starts[i], s, cu[s], cu[s + 1]);
        }
      },
      .infer = [](P& p, const TensorMap& t) {
        paged::infer_num_blocks(p, t, Layout::Vllm);
        p.num_seqs = dim_of(t, "cu_seqlens_q", 1, 0) - 1;
        p.total_q_tokens = dim_of(t, "q", 3, 0);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        generate_varlen(p, Layout::Vllm, Align::PosOffsets, p.num_seqs, p.total_q_tokens, t, r);
        // Every sequence's rows in tiles of 4, the tile list shuffled: a kernel may not assume order.
        // (Parameters from elsewhere may ask for fewer tiles: the list is cut, its rows unwritten.)
        const auto rows = varlen_plan(p, Align::PosOffsets, p.num_seqs, p.total_q_tokens).lens;
        std::vector<std::pair<int64_t, int64_t>> tiles;
        int64_t row = 0;
        for (size_t s = 0; s < rows.size(); ++s) {
          for (int64_t i = 0; i < rows[s]; i += 4) tiles.push_back({static_cast<int64_t>(s), row + i});
          row += rows[s];
        }
        tiles.resize(std::min<size_t>(tiles.size(), static_cast<size_t>(p.num_tiles)), {0, 0});
        for (int64_t i = static_cast<int64_t>(tiles.size()) - 1; i > 0; --i) std::swap(tiles[i], tiles[r.below(i + 1)]);
        for (size_t i = 0; i < tiles.size(); ++i) {
          t.at("tile_seqs").set(static_cast<int64_t>(i), static_cast<double>(tiles[i].first));
          t.at("tile_starts").set(static_cast<int64_t>(i), static_cast<double>(tiles[i].second));
        }
      },
      .next_step = [](P& p, Rng& r) { paged::next_step(p.gen_lens, p.gen_pos, true, 0, r); },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return paged::tolerance(p, dt, p.max_kv_len, in); },
      .outputs = {{"out", {}, [](const P& p, const TensorMap& in, const TensorMap&, std::vector<uint8_t>& mask) {
                     const std::vector<uint8_t> covered = paged::tiled_rows(in, p.num_tiles);
                     const int64_t width = p.num_heads * p.head_dim;
                     for (int64_t row = 0; row < p.total_q_tokens; ++row)
                       if (!covered[row]) std::fill(mask.begin() + row * width, mask.begin() + (row + 1) * width, 0);
                   }}},
      .cost = [](const P& p, DType dt) { return varlen_cost(p, Align::PosOffsets, p.num_seqs, p.total_q_tokens, dt); },
      .view = [](const P& p) { return std::any(paged::tiles_view(p)); },
      .cases = cases,
      .benches = benches,
  });
  return op;
}

}  // namespace ts
