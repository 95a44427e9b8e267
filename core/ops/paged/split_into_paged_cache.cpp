// The split ops of the paged family: split_qkv_norm_rope whose k and v land in the pools, through a
// block table, instead of head-major tensors. Single sequence (split_qkv_norm_rope_into_paged_cache,
// + _vllm): token t at RoPE position pos_offset + t and pool slot cache_len + t; qkv and q_out are
// flat buffers read and written from qkv_byte_offset / q_out_byte_offset on (a slice of a larger
// batch buffer), q head-major. Varlen (+ _vllm): row i of sequence s at position pos_offsets[s] + i
// for both, q_out token-major [m_total, q_heads, head_dim]. Every pool slot not written keeps its
// value (NaN in unused slots), and is compared.
#include <algorithm>
#include <numeric>

#include "core/ops/core/rope_common.h"
#include "core/ops/paged/attention_common.h"

namespace ts {
using namespace describe;
using paged::Layout;

namespace {

int64_t qkv_width(int64_t q_heads, int64_t kv_heads, int64_t head_dim) {
  return checked::mul(checked::add(q_heads, checked::mul(2, kv_heads, "qkv width"), "qkv width"), head_dim, "qkv width");
}

paged::Pool pool(Layout layout, int64_t num_blocks, int64_t kv_heads, int64_t block_size, int64_t head_dim, int64_t x) {
  return {layout, num_blocks, kv_heads, block_size, head_dim, layout == Layout::Vllm ? x : 1};
}

// The inputs of split_qkv_norm_rope with qkv replaced (flat, or [m_total, width]), then the pools.
std::vector<TensorDecl> split_tensors(const SplitQkvNormRopeParams& s, Shape qkv, const paged::Pool& pool) {
  auto d = rope::split_inputs(s);
  d[0].shape = std::move(qkv);
  d.push_back(inout("cache_k", pool.key_shape()));
  d.push_back(inout("cache_v", pool.value_shape()));
  return d;
}

// Pools with N(0,1) at positions [0, lens[s]) of each sequence (earlier tokens, and the slots about to
// be written, whose stale values show a missed write) and NaN in every other slot.
void generate_pools(const paged::Pool& pool, TensorMap& t, const std::string& tables, const std::vector<int64_t>& lens,
                    Rng& r) {
  paged::generate_block_tables(t.at(tables), lens, pool.block_size, pool.num_blocks, r);
  paged::fill_pools(t.at("cache_k"), t.at("cache_v"), pool, t.at(tables), lens, r);
}

// ---- single sequence ----

using P = PagedSplitParams;

paged::Pool pool_of(const P& p, Layout layout) {
  return pool(layout, p.num_blocks, p.kv_heads, p.block_size, p.head_dim, p.x);
}

// A preset: the split's parameters, the cache length before the write, the block size and the byte
// offsets (multiples of 4, so of every activation dtype's size). The flat buffers are sized for the
// smallest dtype, so F32 cases carry unused elements past the end too.
P split(SplitQkvNormRopeParams s, int64_t cache_len, int64_t bs, int64_t qkv_off = 0, int64_t q_out_off = 0) {
  P p;
  static_cast<SplitQkvNormRopeParams&>(p) = s;
  p.cache_len = cache_len, p.block_size = bs, p.qkv_byte_offset = qkv_off, p.q_out_byte_offset = q_out_off;
  const int64_t len = cache_len + s.tokens;
  p.max_num_blocks_per_seq = (len + bs - 1) / bs + 1;
  p.num_blocks = paged::preset_blocks({len}, bs);
  p.qkv_elems = qkv_off / 2 + s.tokens * qkv_width(s.q_heads, s.kv_heads, s.head_dim);
  p.q_out_elems = q_out_off / 2 + s.q_heads * s.tokens * s.head_dim;
  return p;
}

std::vector<Preset<P>> split_cases() {
  return {
      {"decode_bs16_hd128", Tier::Smoke,
       split({.tokens = 1, .q_heads = 4, .kv_heads = 2, .head_dim = 128, .pos_offset = 33, .max_pos = 40}, 33, 16)},
      // Slots 14 .. 18 cross the block boundary at 16.
      {"chunk_across_blocks_bs16_hd64", Tier::Smoke,
       split({.tokens = 5, .q_heads = 4, .kv_heads = 1, .head_dim = 64, .pos_offset = 14, .max_pos = 24}, 14, 16)},
      {"bs1_mode2_hd64", Tier::Ci,
       split({.tokens = 3, .q_heads = 2, .kv_heads = 2, .head_dim = 64, .pos_offset = 4, .qk_mode = 2, .max_pos = 8}, 4, 1)},
      // A slice of larger batch buffers: the op's qkv starts 256 bytes in, its q_out 512 bytes in.
      {"byte_offsets_bs32_hd128", Tier::Ci,
       split({.tokens = 3, .q_heads = 4, .kv_heads = 1, .head_dim = 128, .pos_offset = 31, .max_pos = 40}, 31, 32, 256, 512)},
      // RoPE positions come from pos_offset, pool slots from cache_len: here they differ.
      {"pos_offset_not_cache_len_bs16_hd64", Tier::Ci,
       split({.tokens = 2, .q_heads = 2, .kv_heads = 1, .head_dim = 64, .pos_offset = 20, .max_pos = 24}, 3, 16)},
      {"mode0_bs16_hd256", Tier::Ci,
       split({.tokens = 4, .q_heads = 2, .kv_heads = 2, .head_dim = 256, .pos_offset = 2, .qk_mode = 0, .max_pos = 6}, 2, 16)},
      {"partial_rotary_bs32_hd128", Tier::Ci,
       split({.tokens = 2, .q_heads = 4, .kv_heads = 1, .head_dim = 128, .pos_offset = 64, .rotary_dim = 64, .max_pos = 66},
             64, 32)},
  };
}

OpDef<P> split_op(std::string name, Layout layout, std::string summary) {
  return {
      .name = std::move(name),
      .family = "paged",
      .summary = std::move(summary),
      .tensors = [layout](const P& p) {
        auto d = split_tensors(p, {p.qkv_elems}, pool_of(p, layout));
        d.push_back(inout("q_out", {p.q_out_elems}));
        d.push_back(pinned(in("block_table", {p.max_num_blocks_per_seq}), DType::U32));
        return d;
      },
      .validate_params = [layout](const P& p) {
        rope::check_split_params(p);
        non_negative(p.cache_len, "cache_len");
        non_negative(p.qkv_byte_offset, "qkv_byte_offset");
        non_negative(p.q_out_byte_offset, "q_out_byte_offset");
        checked::add(p.cache_len, p.tokens, "pool slots cache_len + tokens");
        paged::check_pool_params(layout, p.head_dim, p.block_size, p.max_num_blocks_per_seq, p.x);
      },
      .validate_data = [layout](const P& p, const TensorMap& t) {
        const DType dt = t.at("qkv").dtype();
        const int64_t es = static_cast<int64_t>(dtype_size(dt));
        multiple_of(p.qkv_byte_offset, es, "qkv_byte_offset (in elements of the activation dtype)");
        multiple_of(p.q_out_byte_offset, es, "q_out_byte_offset (in elements of the activation dtype)");
        const int64_t qkv_need = checked::add(p.qkv_byte_offset / es,
                                              checked::mul(p.tokens, qkv_width(p.q_heads, p.kv_heads, p.head_dim), "qkv elements"),
                                              "qkv elements");
        check(qkv_need <= p.qkv_elems, "qkv: {} tokens from byte {} need {} elements, the tensor has {}", p.tokens,
              p.qkv_byte_offset, qkv_need, p.qkv_elems);
        const int64_t q_need = checked::add(
            p.q_out_byte_offset / es,
            checked::mul(checked::mul(p.q_heads, p.tokens, "q_out elements"), p.head_dim, "q_out elements"), "q_out elements");
        check(q_need <= p.q_out_elems, "q_out: {} heads x {} tokens from byte {} need {} elements, the tensor has {}",
              p.q_heads, p.tokens, p.q_out_byte_offset, q_need, p.q_out_elems);
        rope::check_positions(p.pos_offset, p.tokens, p.max_pos, p.qk_mode != rope::kTransposeOnly);
        paged::check_x(layout, p.x, t.at("cache_k").dtype());
        paged::check_tables(t.at("block_table"), "block_table", {checked::add(p.cache_len, p.tokens)}, p.max_num_blocks_per_seq,
                            p.block_size, p.num_blocks);
      },
      .infer = [layout](P& p, const TensorMap& t) {
        p.max_pos = rope::infer_max_pos(t);
        p.num_blocks = dim_of(t, "cache_k", layout == Layout::Ferrum ? 4 : 5, 0);
        p.qkv_elems = dim_of(t, "qkv", 1, 0);
        p.q_out_elems = dim_of(t, "q_out", 1, 0);
      },
      .generate = [layout](const P& p, TensorMap& t, Rng& r) {
        rope::generate_split_inputs(p, t, r);
        normal(t.at("q_out"), r);  // what lies around the op's slice must stay
        generate_pools(pool_of(p, layout), t, "block_table", {p.cache_len + p.tokens}, r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) {
        return rope::tolerance(dt, p.qk_mode, p.head_dim, in, "qkv", {"q_norm_w", "k_norm_w"});
      },
      .cost = [](const P& p, DType dt) { return rope::split_cost(p, dt); },
      .cases = layout == Layout::Vllm ? paged::per_x(split_cases()) : split_cases(),
      .benches = [layout] {
        std::vector<Preset<P>> b{{"qwen3_8b_decode_pos1000_bs16", Tier::Full,
                                  split({.tokens = 1, .q_heads = 32, .kv_heads = 8, .head_dim = 128, .pos_offset = 1000,
                                         .max_pos = 4096},
                                        1000, 16)}};
        return layout == Layout::Vllm ? paged::per_x(b) : b;
      }(),
  };
}

// ---- varlen ----

using V = PagedSplitVarlenParams;

paged::Pool pool_of(const V& p, Layout layout) {
  return pool(layout, p.num_blocks, p.kv_heads, p.block_size, p.head_dim, p.x);
}

// The split's own parameters over all m_total rows (positions are per sequence).
SplitQkvNormRopeParams as_split(const V& p) {
  return {.tokens = p.m_total, .q_heads = p.q_heads, .kv_heads = p.kv_heads, .head_dim = p.head_dim, .eps = p.eps,
          .qk_mode = p.qk_mode, .rotary_dim = p.rotary_dim, .max_pos = p.max_pos};
}

std::vector<int64_t> kv_lengths(const std::vector<int64_t>& rows, const std::vector<int64_t>& pos) {
  std::vector<int64_t> len(rows.size());
  for (size_t s = 0; s < rows.size(); ++s) len[s] = pos[s] + rows[s];
  return len;
}

V varlen(int64_t qh, int64_t kvh, int64_t hd, int64_t bs, std::vector<int64_t> rows, std::vector<int64_t> pos,
         int64_t qk_mode = 1) {
  V p;
  p.num_seqs = static_cast<int64_t>(rows.size());
  p.m_total = std::accumulate(rows.begin(), rows.end(), int64_t{0});
  p.q_heads = qh, p.kv_heads = kvh, p.head_dim = hd, p.block_size = bs, p.qk_mode = qk_mode;
  const auto len = kv_lengths(rows, pos);
  const paged::TableSize ts = paged::table_size(len, bs);
  p.max_blocks_per_seq = ts.width, p.max_pos = std::max<int64_t>(1, ts.longest);
  p.num_blocks = paged::preset_blocks(len, bs);
  p.gen_lens = std::move(rows), p.gen_pos = std::move(pos);
  return p;
}

std::vector<Preset<V>> varlen_cases() {
  return {
      {"mixed3_bs16_hd128", Tier::Smoke, varlen(4, 2, 128, 16, {3, 1, 6}, {0, 31, 10})},
      {"empty_sequence_bs1_hd64", Tier::Ci, varlen(2, 1, 64, 1, {2, 0, 3}, {4, 5, 0})},
      {"boundaries_bs32_hd256_mode2", Tier::Ci, varlen(2, 2, 256, 32, {32, 2}, {0, 31}, 2)},
      {"very_different_lengths_bs16_hd64", Tier::Ci, varlen(4, 1, 64, 16, {1, 70, 9, 33}, {199, 0, 8, 7})},
  };
}

OpDef<V> varlen_op(std::string name, Layout layout, std::string summary) {
  return {
      .name = std::move(name),
      .family = "paged",
      .summary = std::move(summary),
      .tensors = [layout](const V& p) {
        auto d = split_tensors(as_split(p), {p.m_total, qkv_width(p.q_heads, p.kv_heads, p.head_dim)}, pool_of(p, layout));
        d.push_back(out("q_out", {p.m_total, p.q_heads, p.head_dim}));
        d.push_back(pinned(in("cu_seqlens_q", {checked::add(p.num_seqs, 1, "num_seqs + 1")}), DType::U32));
        d.push_back(pinned(in("pos_offsets", {p.num_seqs}), DType::U32));
        d.push_back(pinned(in("block_tables", {p.num_seqs, p.max_blocks_per_seq}), DType::U32));
        return d;
      },
      .validate_params = [layout](const V& p) {
        positive(p.num_seqs, "num_seqs");
        rope::check_split_params(as_split(p));
        paged::check_pool_params(layout, p.head_dim, p.block_size, p.max_blocks_per_seq, p.x);
      },
      .validate_data = [layout](const V& p, const TensorMap& t) {
        const auto rows = paged::rows_per_sequence(t, p.m_total);
        const auto pos = paged::lengths(t, "pos_offsets");
        for (size_t s = 0; s < rows.size(); ++s)
          rope::check_positions(pos[s], rows[s], p.max_pos, p.qk_mode != rope::kTransposeOnly);
        paged::check_x(layout, p.x, t.at("cache_k").dtype());
        paged::check_tables(t.at("block_tables"), "block_tables", kv_lengths(rows, pos), p.max_blocks_per_seq,
                            p.block_size, p.num_blocks);
      },
      .infer = [layout](V& p, const TensorMap& t) {
        p.max_pos = rope::infer_max_pos(t);
        p.num_blocks = dim_of(t, "cache_k", layout == Layout::Ferrum ? 4 : 5, 0);
      },
      .generate = [layout](const V& p, TensorMap& t, Rng& r) {
        rope::generate_split_inputs(as_split(p), t, r);
        const paged::SeqPlan plan = paged::plan(p.gen_lens, p.gen_pos, p.num_seqs, p.m_total);
        std::vector<int64_t> cu(plan.lens.size() + 1, 0);
        std::partial_sum(plan.lens.begin(), plan.lens.end(), cu.begin() + 1);
        paged::set_lengths(t.at("cu_seqlens_q"), cu);
        paged::set_lengths(t.at("pos_offsets"), plan.pos);
        generate_pools(pool_of(p, layout), t, "block_tables", kv_lengths(plan.lens, plan.pos), r);
      },
      .next_step = [](V& p, Rng& r) {
        paged::move_rows(p.gen_lens, p.gen_pos, false, p.max_pos, 0, r);
        paged::next_step(p.gen_lens, p.gen_pos, true, 0, r);
      },
      .tolerance = [](const V& p, DType dt, const TensorMap& in) {
        return rope::tolerance(dt, p.qk_mode, p.head_dim, in, "qkv", {"q_norm_w", "k_norm_w"});
      },
      .cost = [](const V& p, DType dt) { return rope::split_cost(as_split(p), dt); },
      .cases = layout == Layout::Vllm ? paged::per_x(varlen_cases()) : varlen_cases(),
      .benches = [layout] {
        // Llama-3-8B shapes: a prefill chunk of 7 sequences beside decode rows.
        std::vector<Preset<V>> b{{"llama3_8b_mixed7_bs16", Tier::Full,
                                  varlen(32, 8, 128, 16, {17, 900, 64, 333, 128, 511, 40}, {0, 0, 100, 0, 2000, 0, 7})}};
        return layout == Layout::Vllm ? paged::per_x(b) : b;
      }(),
  };
}

}  // namespace

const Op& op_split_qkv_norm_rope_into_paged_cache() {
  static const TypedOp<P> op(split_op(
      "split_qkv_norm_rope_into_paged_cache", Layout::Ferrum,
      "split_qkv_norm_rope of one sequence, k and v into ferrum pools at slots cache_len.. through block_table"));
  return op;
}

const Op& op_split_qkv_norm_rope_into_paged_cache_vllm() {
  static const TypedOp<P> op(split_op(
      "split_qkv_norm_rope_into_paged_cache_vllm", Layout::Vllm,
      "split_qkv_norm_rope_into_paged_cache into vLLM's pools (key [nb,nkv,hd/x,bs,x], value [nb,nkv,hd,bs])"));
  return op;
}

const Op& op_split_qkv_norm_rope_into_paged_cache_varlen() {
  static const TypedOp<V> op(varlen_op(
      "split_qkv_norm_rope_into_paged_cache_varlen", Layout::Ferrum,
      "varlen split: row i of sequence s at position pos_offsets[s] + i (RoPE and slot), q_out [m_total,qh,hd]"));
  return op;
}

const Op& op_split_qkv_norm_rope_into_paged_cache_varlen_vllm() {
  static const TypedOp<V> op(varlen_op(
      "split_qkv_norm_rope_into_paged_cache_varlen_vllm", Layout::Vllm,
      "split_qkv_norm_rope_into_paged_cache_varlen into vLLM's pools"));
  return op;
}

}  // namespace ts
