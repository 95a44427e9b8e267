#include "graph/weights.h"

#include <cmath>

#include "core/quant/formats.h"

namespace ts::graph {

std::vector<WeightSpec> llama_weights(const DecodeParams& p) {
  const DType dt = p.act_dtype();
  const quant::Format* f = quant::format(p.kind);
  auto matrix = [&](std::string name, int64_t n, int64_t k) {
    if (f) return WeightSpec{std::move(name), WeightSpec::Use::Matrix, DType::U8, {n, quant::row_bytes(*f, k)}, n, k};
    return WeightSpec{std::move(name), WeightSpec::Use::Matrix, dt, {n, k}, n, k};
  };
  auto norm = [&](std::string name) { return WeightSpec{std::move(name), WeightSpec::Use::Norm, dt, {p.hidden}, 0, 0}; };
  std::vector<WeightSpec> w;
  w.push_back({"token_embd", WeightSpec::Use::Embedding, dt, {p.vocab, p.hidden}, p.vocab, p.hidden});
  for (int64_t l = 0; l < p.layers; ++l) {
    const std::string b = fmt::format("blk.{}.", l);
    w.push_back(norm(b + "attn_norm"));
    w.push_back(matrix(b + "attn_q", p.q_dim(), p.hidden));
    w.push_back(matrix(b + "attn_k", p.kv_dim(), p.hidden));
    w.push_back(matrix(b + "attn_v", p.kv_dim(), p.hidden));
    w.push_back(matrix(b + "attn_output", p.hidden, p.q_dim()));
    w.push_back(norm(b + "ffn_norm"));
    w.push_back(matrix(b + "ffn_gate", p.ffn, p.hidden));
    w.push_back(matrix(b + "ffn_up", p.ffn, p.hidden));
    w.push_back(matrix(b + "ffn_down", p.hidden, p.ffn));
  }
  w.push_back(norm("output_norm"));
  return w;
}

TensorMap generate_weights(const DecodeParams& p, Rng& r) {
  TensorMap t;
  for (const WeightSpec& s : llama_weights(p)) {
    Tensor x(s.dtype, s.shape);
    if (s.use == WeightSpec::Use::Norm) {
      for (int64_t i = 0; i < x.numel(); ++i) x.set(i, r.uniform(0.5, 1.5));
    } else if (s.use == WeightSpec::Use::Embedding) {
      for (int64_t i = 0; i < x.numel(); ++i) x.set(i, r.normal());
    } else {
      const double sd = 1.0 / std::sqrt(static_cast<double>(s.k));
      if (const quant::Format* f = quant::format(p.kind)) {
        std::vector<float> row(static_cast<size_t>(s.k));
        const int64_t rb = quant::row_bytes(*f, s.k);
        for (int64_t i = 0; i < s.n; ++i) {
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
