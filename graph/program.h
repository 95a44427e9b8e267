#pragma once
// The graph family (docs/catalog.md, "Family graph"): a whole decode step of a model, composed of the
// catalog's ops, run eagerly or captured once and replayed with new per-step state. This header holds
// what a program is: its parameters, the per-step state it reads, and the KV cache it writes into.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/kinds.h"
#include "core/params.h"
#include "core/tensor.h"

namespace ts::graph {

// The programs of the family, by name. Each is a decode step of one token of one sequence.
inline constexpr const char* kLlamaDecode = "llama_decode";
inline constexpr const char* kQwen3MoeDecode = "qwen3_moe_decode";
const std::vector<std::string>& program_names();
// An Error naming the programs for anything else.
void check_program(const std::string& name);

// The parameters of llama_decode and qwen3_moe_decode. `kind` is the weight kind of every matrix (F32, F16 or Q4_K); the
// step's activation dtype is F16 for F16 weights, F32 otherwise. `ctx` is the cache's length before
// the first step (a prompt already in it); step s appends the token at position ctx + s. `rope_base`
// is RoPE's theta. The pool's block count and the block table's width follow from ctx + steps.
struct DecodeParams {
  QuantKind kind = QuantKind::F32;
  int64_t layers = 1, hidden = 64, heads = 2, kv_heads = 1, head_dim = 32, ffn = 128, vocab = 64;
  int64_t block_size = 16, steps = 4, ctx = 0;
  float eps = 1e-5f, rope_base = 10000.0f;
  // qwen3_moe_decode only (0 for llama_decode): the experts, those each token takes, and each expert's
  // ffn width. Its `ffn` is unused (0).
  int64_t experts = 0, top_k = 0, expert_ffn = 0;
  template <class V> void fields(V& v) {
    v("kind", kind); v("layers", layers); v("hidden", hidden); v("heads", heads); v("kv_heads", kv_heads);
    v("head_dim", head_dim); v("ffn", ffn); v("vocab", vocab); v("block_size", block_size); v("steps", steps);
    v("ctx", ctx); v("eps", eps); v("rope_base", rope_base);
    v.optional("experts", experts); v.optional("top_k", top_k); v.optional("expert_ffn", expert_ffn);
  }
  bool moe() const { return experts > 0; }

  DType act_dtype() const { return kind == QuantKind::F16 ? DType::F16 : DType::F32; }
  int64_t max_pos() const { return ctx + steps; }  // the RoPE tables' rows: every position a step takes
  // The table's width: the blocks of the last step's length, plus one entry past it.
  int64_t max_blocks() const { return (max_pos() + block_size - 1) / block_size + 1; }
  // The pool: the blocks the sequence uses plus two it never does (NaN: a read of one shows).
  int64_t num_blocks() const { return max_blocks() + 1; }
  int64_t q_dim() const { return heads * head_dim; }
  int64_t kv_dim() const { return kv_heads * head_dim; }
  // The words of the state buffer a step reads (state_layout below).
  int64_t state_words() const { return 3 + max_blocks(); }
};

// Parameter consistency: positive sizes, heads a multiple of kv_heads, an even head_dim, a kind the
// program runs (F32, F16, Q4_K) with hidden and ffn multiples of its block. An Error naming the first.
void check_params(const std::string& program, const DecodeParams& p);
DecodeParams params_from_metadata(const std::string& program, const ParamMap& m);  // "program", "seed": not parameters
std::string shape_name(const DecodeParams& p);         // "h64_ffn128_hd32_Q4_K"

// The state buffer a step reads, U32 words, written by the caller before each step
// (DecodeGraph::set_decode_state): [token, position, context length, block table...].
namespace state_layout {
inline constexpr int64_t kToken = 0, kPosition = 1, kContextLen = 2, kTable = 3;
}

// The per-step state of one step, as a caller has it.
struct StepState {
  uint32_t token = 0, position = 0;
  std::vector<uint32_t> table;  // physical block of each logical block; entries past the used ones unread
  std::vector<uint32_t> words(const DecodeParams& p) const;  // in state_layout, table padded to max_blocks
};

// The paged KV cache a program's steps write into: one K and one V pool per layer, ferrum layout
// [num_blocks, kv_heads, block_size, head_dim] of the step's activation dtype. A captured graph points
// into it: freeing it or resizing it (a new generation) invalidates the capture.
class KvCache {
 public:
  KvCache(int64_t layers, int64_t num_blocks, int64_t kv_heads, int64_t block_size, int64_t head_dim, DType dt);
  std::vector<Tensor> k, v;
  int64_t num_blocks() const { return num_blocks_; }
  uint64_t generation() const { return generation_; }
  // New pools of `num_blocks` blocks, every slot NaN (what a serving engine does when it grows its cache).
  void resize(int64_t num_blocks);

 private:
  int64_t layers_, num_blocks_, kv_heads_, block_size_, head_dim_;
  DType dt_;
  uint64_t generation_ = 0;
};

}  // namespace ts::graph
