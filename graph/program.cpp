#include "graph/program.h"

#include <limits>

#include "core/error.h"
#include "core/quant/formats.h"

namespace ts::graph {

const std::vector<std::string>& program_names() {
  static const std::vector<std::string> names = {kLlamaDecode, kQwen3MoeDecode};
  return names;
}

void check_program(const std::string& name) {
  for (const auto& n : program_names())
    if (n == name) return;
  std::string all;
  for (const auto& n : program_names()) all += (all.empty() ? "" : ", ") + n;
  fail("unknown graph program '{}' (programs: {})", name, all);
}

void check_params(const std::string& program, const DecodeParams& p) {
  check_program(program);
  const bool moe = program == kQwen3MoeDecode;
  for (auto [v, name] : {std::pair{p.layers, "layers"}, {p.hidden, "hidden"}, {p.heads, "heads"}, {p.kv_heads, "kv_heads"},
                         {p.head_dim, "head_dim"}, {moe ? p.expert_ffn : p.ffn, moe ? "expert_ffn" : "ffn"},
                         {p.vocab, "vocab"}, {p.block_size, "block_size"}, {p.steps, "steps"}})
    check(v > 0, "parameter '{}' must be positive, is {}", name, v);
  check(p.ctx >= 0, "parameter 'ctx' must not be negative, is {}", p.ctx);
  // Positions and lengths travel as U32 words of the state buffer, and sizes multiply: keep them small.
  constexpr int64_t kMax = int64_t{1} << 24;
  for (auto [v, name] : {std::pair{p.layers, "layers"}, {p.hidden, "hidden"}, {p.heads, "heads"}, {p.head_dim, "head_dim"},
                         {p.ffn, "ffn"}, {p.vocab, "vocab"}, {p.block_size, "block_size"}, {p.steps, "steps"}, {p.ctx, "ctx"},
                         {p.experts, "experts"}, {p.top_k, "top_k"}, {p.expert_ffn, "expert_ffn"}})
    check(v < kMax, "parameter '{}' is {}, past the programs' limit of {}", name, v, kMax);
  check(p.heads % p.kv_heads == 0, "parameter 'heads' ({}) must be a multiple of 'kv_heads' ({})", p.heads, p.kv_heads);
  check(p.head_dim % 2 == 0, "parameter 'head_dim' must be even (rotate-half RoPE), is {}", p.head_dim);
  if (moe) {
    check(p.kind == QuantKind::Q4_K, "parameter 'kind': qwen3_moe_decode runs Q4_K weights, not {}", enum_name(p.kind));
    check(p.experts >= 2, "parameter 'experts' must be at least 2, is {}", p.experts);
    check(p.top_k >= 1 && p.top_k <= p.experts, "parameter 'top_k' must be in [1, experts = {}], is {}", p.experts, p.top_k);
    check(p.ffn == 0, "parameter 'ffn' is llama_decode's: qwen3_moe_decode's experts are expert_ffn wide");
  } else {
    check(p.kind == QuantKind::F32 || p.kind == QuantKind::F16 || p.kind == QuantKind::Q4_K,
          "parameter 'kind': llama_decode runs F32, F16 or Q4_K weights, not {}", enum_name(p.kind));
    check(p.experts == 0 && p.top_k == 0 && p.expert_ffn == 0,
          "parameters 'experts', 'top_k' and 'expert_ffn' are qwen3_moe_decode's, not llama_decode's");
  }
  if (const quant::Format* f = quant::format(p.kind)) {
    quant::check_row(*f, p.hidden, "hidden");
    if (moe) quant::check_row(*f, p.expert_ffn, "expert_ffn");
    else quant::check_row(*f, p.ffn, "ffn");
    quant::check_row(*f, p.q_dim(), "heads * head_dim");
  }
  check(std::isfinite(p.eps) && p.eps > 0, "parameter 'eps' must be positive, is {}", p.eps);
  check(std::isfinite(p.rope_base) && p.rope_base > 1, "parameter 'rope_base' must be above 1, is {}", p.rope_base);
}

DecodeParams params_from_metadata(const std::string& program, const ParamMap& m) {
  ParamMap q = m;
  q.erase("program");
  q.erase("family");
  DecodeParams p = params_from_map<DecodeParams>(q);
  check_params(program, p);
  return p;
}

std::string shape_name(const DecodeParams& p) {
  if (p.moe())
    return fmt::format("h{}_e{}k{}_effn{}_hd{}_{}", p.hidden, p.experts, p.top_k, p.expert_ffn, p.head_dim, enum_name(p.kind));
  return fmt::format("h{}_ffn{}_hd{}_{}", p.hidden, p.ffn, p.head_dim, enum_name(p.kind));
}

std::vector<uint32_t> StepState::words(const DecodeParams& p) const {
  std::vector<uint32_t> w(static_cast<size_t>(p.state_words()), 0);
  using namespace state_layout;
  w[kToken] = token;
  w[kPosition] = position;
  w[kContextLen] = position + 1;
  for (size_t i = 0; i < table.size() && kTable + static_cast<int64_t>(i) < p.state_words(); ++i) w[kTable + i] = table[i];
  return w;
}

KvCache::KvCache(int64_t layers, int64_t num_blocks, int64_t kv_heads, int64_t block_size, int64_t head_dim, DType dt)
    : layers_(layers), num_blocks_(num_blocks), kv_heads_(kv_heads), block_size_(block_size), head_dim_(head_dim), dt_(dt) {
  resize(num_blocks);
  generation_ = 0;
}

void KvCache::resize(int64_t num_blocks) {
  num_blocks_ = num_blocks;
  k.clear();
  v.clear();
  for (int64_t l = 0; l < layers_; ++l) {
    for (auto* pools : {&k, &v}) {
      Tensor t(dt_, {num_blocks_, kv_heads_, block_size_, head_dim_});
      t.fill(std::numeric_limits<double>::quiet_NaN());
      pools->push_back(std::move(t));
    }
  }
  ++generation_;
}

}  // namespace ts::graph
