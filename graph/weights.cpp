#include "graph/weights.h"

#include <cmath>

#include "core/quant/formats.h"

namespace ts::graph {

std::vector<WeightSpec> program_weights(const std::string& program, const DecodeParams& p) {
  const DType dt = p.act_dtype();
  const quant::Format* f = quant::format(p.kind);
  auto matrix = [&](std::string name, int64_t n, int64_t k, int64_t stack = 1) {
    Shape s = f ? Shape{n, quant::row_bytes(*f, k)} : Shape{n, k};
    if (stack > 1) s.insert(s.begin(), stack);
    return WeightSpec{std::move(name), WeightSpec::Use::Matrix, f ? DType::U8 : dt, s, n, k, stack};
  };
  auto norm = [&](std::string name, int64_t len) { return WeightSpec{std::move(name), WeightSpec::Use::Norm, dt, {len}, 0, 0}; };
  const bool moe = program == kQwen3MoeDecode;
  std::vector<WeightSpec> w;
  w.push_back({"token_embd", WeightSpec::Use::Embedding, dt, {p.vocab, p.hidden}, p.vocab, p.hidden});
  for (int64_t l = 0; l < p.layers; ++l) {
    const std::string b = fmt::format("blk.{}.", l);
    w.push_back(norm(b + "attn_norm", p.hidden));
    w.push_back(matrix(b + "attn_q", p.q_dim(), p.hidden));
    w.push_back(matrix(b + "attn_k", p.kv_dim(), p.hidden));
    w.push_back(matrix(b + "attn_v", p.kv_dim(), p.hidden));
    if (moe) {  // Qwen3's per-head q and k norms
      w.push_back(norm(b + "attn_q_norm", p.head_dim));
      w.push_back(norm(b + "attn_k_norm", p.head_dim));
    }
    w.push_back(matrix(b + "attn_output", p.hidden, p.q_dim()));
    w.push_back(norm(b + "ffn_norm", p.hidden));
    if (moe) {
      // The router is F32 in Qwen3's GGUF files whatever the experts' kind.
      w.push_back({b + "ffn_gate_inp", WeightSpec::Use::Matrix, DType::F32, {p.experts, p.hidden}, p.experts, p.hidden, 1});
      w.push_back(matrix(b + "ffn_gate_exps", p.expert_ffn, p.hidden, p.experts));
      w.push_back(matrix(b + "ffn_up_exps", p.expert_ffn, p.hidden, p.experts));
      w.push_back(matrix(b + "ffn_down_exps", p.hidden, p.expert_ffn, p.experts));
    } else {
      w.push_back(matrix(b + "ffn_gate", p.ffn, p.hidden));
      w.push_back(matrix(b + "ffn_up", p.ffn, p.hidden));
      w.push_back(matrix(b + "ffn_down", p.hidden, p.ffn));
    }
  }
  w.push_back(norm("output_norm", p.hidden));
  return w;
}

TensorMap generate_weights(const std::string& program, const DecodeParams& p, Rng& r) {
  TensorMap t;
  for (const WeightSpec& s : program_weights(program, p)) {
    Tensor x(s.dtype, s.shape);
    if (s.use == WeightSpec::Use::Norm) {
      for (int64_t i = 0; i < x.numel(); ++i) x.set(i, r.uniform(0.5, 1.5));
    } else if (s.use == WeightSpec::Use::Embedding) {
      for (int64_t i = 0; i < x.numel(); ++i) x.set(i, r.normal());
    } else {
      const double sd = 1.0 / std::sqrt(static_cast<double>(s.k));
      if (const quant::Format* f = s.dtype == DType::U8 ? quant::format(p.kind) : nullptr) {
        std::vector<float> row(static_cast<size_t>(s.k));
        const int64_t rb = quant::row_bytes(*f, s.k);
        for (int64_t i = 0; i < s.stack * s.n; ++i) {
          for (auto& v : row) v = static_cast<float>(sd * r.normal());
          f->quantize_row(row.data(), x.as<uint8_t>() + i * rb, s.k);
        }
      } else {
        for (int64_t i = 0; i < x.numel(); ++i) x.set(i, sd * r.normal());
      }
    }
    t.emplace(s.name, std::move(x));
  }
  return t;
}

RopeTables rope_tables(const DecodeParams& p) {
  const int64_t half = p.head_dim / 2;
  RopeTables t{Tensor(p.act_dtype(), {p.max_pos(), half}), Tensor(p.act_dtype(), {p.max_pos(), half})};
  for (int64_t pos = 0; pos < p.max_pos(); ++pos)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(pos) *
                           std::pow(static_cast<double>(p.rope_base), -2.0 * static_cast<double>(i) / static_cast<double>(p.head_dim));
      t.cos.set(pos * half + i, std::cos(angle));
      t.sin.set(pos * half + i, std::sin(angle));
    }
  return t;
}

}  // namespace ts::graph
