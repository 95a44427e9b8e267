// paged_decode_attention, paged_decode_attention_v2 and paged_varlen_attention_vllm_layout: decode
// (or one sequence's causal prefill) over block tables. The three differ only in the pool layout
// (ferrum, or vLLM's for _vllm_layout, which takes the seed's decode arguments) and, for _v2, in
// splitting the keys into partitions of 512 whose partial softmax states are reduced (the same
// result: the reference does not split).
#include <algorithm>

#include "core/ops/paged/attention_common.h"
#include "core/ops/paged/attention_view.h"

namespace ts {
using namespace describe;
using paged::Layout;

namespace {

// Each sequence's kv length: the preset's, else every table full.
template <class P> std::vector<int64_t> kv_lens(const P& p) {
  if (!p.gen_lens.empty()) return p.gen_lens;
  std::vector<int64_t> lens(static_cast<size_t>(p.num_seqs), p.max_num_blocks_per_seq * p.block_size);
  return lens;
}

// Decode rows of sequence s see its whole context; prefill row i sees [0, ctx - q_len + 1 + i).
double visible_pairs(const std::vector<int64_t>& lens, int64_t q_len) {
  double pairs = 0;
  for (int64_t len : lens)
    for (int64_t i = 0; i < q_len; ++i) pairs += static_cast<double>(std::max<int64_t>(0, len - q_len + 1 + i));
  return pairs;
}

template <class P> Shape q_shape(const P& p, int64_t q_len) {
  if (q_len == 1) return {p.num_seqs, p.num_heads, p.head_dim};
  return {p.num_heads, q_len, p.head_dim};
}

template <class P> std::vector<TensorDecl> decode_tensors(const P& p, Layout layout, int64_t q_len) {
  std::vector<TensorDecl> d{in("q", q_shape(p, q_len))};
  for (auto& pool : paged::pool_decls(p, layout)) d.push_back(std::move(pool));
  d.push_back(pinned(in("block_tables", {p.num_seqs, p.max_num_blocks_per_seq}), DType::U32));
  d.push_back(pinned(in("context_lens", {p.num_seqs}), DType::U32));
  d.push_back(out("out", q_shape(p, q_len)));
  return d;
}

template <class P> void generate_decode(const P& p, Layout layout, TensorMap& t, Rng& r) {
  const std::vector<int64_t> lens = kv_lens(p);
  normal(t.at("q"), r);
  paged::set_lengths(t.at("context_lens"), lens);
  paged::generate_pools(p, layout, t, "block_tables", lens, r);
}

template <class P> Cost decode_cost(const P& p, DType dt, int64_t q_len) {
  const std::vector<int64_t> lens = kv_lens(p);
  double rows = 0;
  for (int64_t len : lens) rows += static_cast<double>(len * p.num_kv_heads);
  return paged::cost(p, dt, visible_pairs(lens, q_len) * static_cast<double>(p.num_heads), rows,
                     static_cast<double>(p.num_seqs * p.num_heads * q_len));
}

template <class P> int64_t max_keys(const P& p) {
  return checked::mul(p.max_num_blocks_per_seq, p.block_size, "max_num_blocks_per_seq * block_size");
}

// A preset: heads, head_dim, block size, the sequences' kv lengths; tables one block wider than the
// longest sequence needs, so each table has an entry past its end (pointing at a NaN block).
PagedDecodeParams decode(int64_t nh, int64_t nkv, int64_t hd, int64_t bs, std::vector<int64_t> lens, int64_t q_len = 1) {
  PagedDecodeParams p;
  p.num_seqs = static_cast<int64_t>(lens.size());
  p.num_heads = nh, p.num_kv_heads = nkv, p.head_dim = hd, p.block_size = bs, p.q_len = q_len;
  p.max_num_blocks_per_seq = paged::table_size(lens, bs).width;
  p.num_blocks = paged::preset_blocks(lens, bs);
  p.gen_lens = std::move(lens);
  return p;
}

// Llama-3-8B decode: 32 query heads on 8 kv heads of 128, blocks of 16, `batch` sequences of `ctx`.
PagedDecodeParams llama3_8b(int64_t batch, int64_t ctx) {
  return decode(32, 8, 128, 16, std::vector<int64_t>(static_cast<size_t>(batch), ctx));
}

std::vector<Preset<PagedDecodeParams>> decode_cases() {
  return {
      // Contexts ending exactly on a block boundary, one past it, a single key, and one short of two
      // blocks; GQA 4.
      {"bs16_gqa4_hd128_boundaries", Tier::Smoke, decode(8, 2, 128, 16, {32, 33, 1, 31})},
      {"bs1_gqa1_hd64", Tier::Ci, decode(4, 4, 64, 1, {5, 9, 1})},
      // A zero context gives zeros; 64 ends on a block of 32, 65 is one past.
      {"bs32_gqa8_hd256_zero_context", Tier::Ci, decode(8, 1, 256, 32, {0, 64, 65})},
      {"bs16_very_different_lengths", Tier::Ci, decode(4, 1, 64, 16, {1, 300, 17, 0, 129})},
      // One sequence's causal prefill (q head-major): row i sees [0, ctx - q_len + 1 + i).
      {"prefill_q7_bs16_gqa4_hd128", Tier::Smoke, decode(4, 1, 128, 16, {40}, 7)},
      {"prefill_q5_on_boundary_bs32_gqa8_hd64", Tier::Ci, decode(8, 1, 64, 32, {32}, 5)},
      {"prefill_q16_whole_context_bs1_hd64", Tier::Ci, decode(2, 2, 64, 1, {16}, 16)},
      {"llama3_8b_b2_ctx300", Tier::Full, decode(32, 8, 128, 16, {300, 17})},
  };
}

// Pools of more than 1 GiB in F32 (batch x context > 32k) are timed in F16 and BF16 only: a serving
// engine's pool dtype, and half the memory.
std::vector<Preset<PagedDecodeParams>> llama3_benches() {
  std::vector<Preset<PagedDecodeParams>> b;
  for (int64_t batch : {1, 8, 32})
    for (int64_t ctx : {1024, 4096, 16384}) {
      b.push_back({fmt::format("llama3_8b_b{}_ctx{}", batch, ctx), Tier::Full, llama3_8b(batch, ctx)});
      if (batch * ctx > 32768) b.back().dtypes = {DType::F16, DType::BF16};
    }
  return b;
}

// The op description of paged_decode_attention and paged_varlen_attention_vllm_layout.
OpDef<PagedDecodeParams> decode_op(std::string name, Layout layout, std::string summary) {
  using P = PagedDecodeParams;
  const bool vllm = layout == Layout::Vllm;
  return {
      .name = std::move(name),
      .family = "paged",
      .summary = std::move(summary),
      .tensors = [layout](const P& p) { return decode_tensors(p, layout, p.q_len); },
      .validate_params = [layout](const P& p) {
        positive(p.num_seqs, "num_seqs");
        positive(p.q_len, "q_len");
        check(p.q_len == 1 || p.num_seqs == 1, "q_len {} > 1 is one sequence's prefill, but num_seqs is {}", p.q_len,
              p.num_seqs);
        paged::check_attention_params(p, layout);
      },
      .validate_data = [layout](const P& p, const TensorMap& t) {
        const auto lens = paged::lengths(t, "context_lens");
        paged::check_pool_data(p, layout, t, lens);
        if (p.q_len > 1)
          check(lens[0] >= p.q_len, "context_lens[0] = {} is shorter than q_len {} (the prefill's own rows)", lens[0],
                p.q_len);
      },
      .infer = [layout](P& p, const TensorMap& t) { paged::infer_num_blocks(p, t, layout); },
      .generate = [layout](const P& p, TensorMap& t, Rng& r) { generate_decode(p, layout, t, r); },
      .next_step = [](P& p, Rng& r) { paged::next_step(p.gen_lens, p.gen_pos, false, p.q_len, r); },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return paged::tolerance(p, dt, max_keys(p), in); },
      .cost = [](const P& p, DType dt) { return decode_cost(p, dt, p.q_len); },
      // A sequence may fill its table: no parameter bounds its length more tightly.
      .view = [layout](const P& p) {
        return std::any(paged::decode_view(p, layout, p.num_seqs, p.q_len, "context_lens",
                                           p.max_num_blocks_per_seq * p.block_size));
      },
      .cases = vllm ? paged::per_x(decode_cases()) : decode_cases(),
      .benches = vllm ? paged::per_x(std::vector<Preset<P>>{{"llama3_8b_b8_ctx4096", Tier::Full, llama3_8b(8, 4096)}})
                      : llama3_benches(),
  };
}

}  // namespace

const Op& op_paged_decode_attention() {
  static const TypedOp<PagedDecodeParams> op(decode_op(
      "paged_decode_attention", Layout::Ferrum,
      "decode (q [S,nh,hd]) or one sequence's causal prefill (q [nh,q_len,hd]) over ferrum pools and block_tables"));
  return op;
}

const Op& op_paged_varlen_attention_vllm_layout() {
  static const TypedOp<PagedDecodeParams> op(decode_op(
      "paged_varlen_attention_vllm_layout", Layout::Vllm,
      "paged_decode_attention over vLLM's pools (key [nb,nkv,hd/x,bs,x], value [nb,nkv,hd,bs]); the seed's arguments"));
  return op;
}

const Op& op_paged_decode_attention_v2() {
  using P = PagedDecodeV2Params;
  static const TypedOp<P> op({
      .name = "paged_decode_attention_v2",
      .family = "paged",
      .summary = "paged_decode_attention's decode, the keys split into partitions of 512 and reduced (vLLM v2)",
      .tensors = [](const P& p) { return decode_tensors(p, Layout::Ferrum, 1); },
      .validate_params = [](const P& p) {
        positive(p.num_seqs, "num_seqs");
        paged::check_attention_params(p, Layout::Ferrum);
        paged::check_length_bound(p, p.max_seq_len, "max_seq_len");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        const auto lens = paged::lengths(t, "context_lens");
        for (size_t s = 0; s < lens.size(); ++s)
          check(lens[s] <= p.max_seq_len, "context_lens[{}] = {} exceeds max_seq_len {}", s, lens[s], p.max_seq_len);
        paged::check_pool_data(p, Layout::Ferrum, t, lens);
      },
      .infer = [](P& p, const TensorMap& t) { paged::infer_num_blocks(p, t, Layout::Ferrum); },
      .generate = [](const P& p, TensorMap& t, Rng& r) { generate_decode(p, Layout::Ferrum, t, r); },
      .next_step = [](P& p, Rng& r) { paged::next_step(p.gen_lens, p.gen_pos, false, 0, r); },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return paged::tolerance(p, dt, p.max_seq_len, in); },
      .cost = [](const P& p, DType dt) { return decode_cost(p, dt, 1); },
      .view = [](const P& p) {
        paged::AttentionView v = paged::decode_view(p, Layout::Ferrum, p.num_seqs, 1, "context_lens", p.max_seq_len);
        v.key_partition = 512;
        return std::any(v);
      },
      .cases = [] {
        // v1's decode presets, with contexts across several partitions of 512 added.
        std::vector<Preset<P>> c;
        auto add = [&](std::string name, Tier tier, const PagedDecodeParams& d) {
          P p;
          static_cast<PagedPoolParams&>(p) = d;
          p.num_seqs = d.num_seqs;
          p.max_seq_len = std::max<int64_t>(1, *std::max_element(d.gen_lens.begin(), d.gen_lens.end()));
          c.push_back({std::move(name), tier, p});
        };
        for (const auto& d : decode_cases())
          if (d.params.q_len == 1) add(d.name, d.tier, d.params);
        // 512 ends the first partition exactly, 513 is one past, 1100 spans three.
        add("partitions_512_513_1100_bs16_gqa4_hd64", Tier::Ci, decode(4, 1, 64, 16, {512, 513, 1100}));
        add("partition_boundary_bs32_gqa8_hd128", Tier::Ci, decode(8, 1, 128, 32, {1024, 1025}));
        return c;
      }(),
      .benches = [] {
        P p;
        const PagedDecodeParams d = llama3_8b(8, 4096);
        static_cast<PagedPoolParams&>(p) = d;
        p.num_seqs = d.num_seqs, p.max_seq_len = 4096;
        return std::vector<Preset<P>>{{"llama3_8b_b8_ctx4096", Tier::Full, p}};
      }(),
  });
  return op;
}

}  // namespace ts
