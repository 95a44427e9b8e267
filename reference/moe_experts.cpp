// Reference: the moe family's expert GEMV / GEMM. One core (expert_gemv) runs every variant: a variant
// only says where pair i finds its activation row, its expert and its output row (a Site), so the
// loops exist once. Weights decode exactly (GGUF rows through the format table, as ref::gemm_quant
// does; plain rows as stored), sums run in double and round once; the fused gate + up + SiLU is
// silu(gate) * up of the two unrounded sums, rounded once.
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "core/quant/formats.h"
#include "reference/reference.h"

namespace ts::ref {

namespace {

// Stacked experts [E, n_rows, n_cols]: GGUF block rows or plain rows in the case dtype.
class ExpertStack {
 public:
  ExpertStack(const MoeExperts& w, const Tensor& t) : w_(w), t_(t), f_(quant::format(w.kind)) {}
  // Row r of expert e as doubles.
  void row(int64_t e, int64_t r, std::vector<double>& out) const {
    const int64_t at = e * w_.n_rows + r;
    if (f_) {
      std::vector<float> v(static_cast<size_t>(w_.n_cols));
      f_->dequantize_row(t_.as<uint8_t>() + at * quant::row_bytes(*f_, w_.n_cols), v.data(), w_.n_cols);
      for (int64_t c = 0; c < w_.n_cols; ++c) out[static_cast<size_t>(c)] = v[static_cast<size_t>(c)];
      return;
    }
    for (int64_t c = 0; c < w_.n_cols; ++c) out[static_cast<size_t>(c)] = t_.get(at * w_.n_cols + c);
  }
  const MoeExperts& shape() const { return w_; }

 private:
  const MoeExperts& w_;
  const Tensor& t_;
  const quant::Format* f_;
};

// Where a pair reads and writes: a[a_at .. a_at + n_cols) against expert `expert`, into out row out_row.
struct Site {
  int64_t a_at, expert, out_row;
};
using Sites = std::function<std::optional<Site>(int64_t pair)>;  // nullopt: a pair the op leaves out

// y[r] = sum_c a[a_at + c] * W[expert, r, c], in double.
std::vector<double> expert_dot(const ExpertStack& w, const Tensor& a, const Site& s) {
  const int64_t n_cols = w.shape().n_cols;
  std::vector<double> y(static_cast<size_t>(w.shape().n_rows)), row(static_cast<size_t>(n_cols));
  for (int64_t r = 0; r < w.shape().n_rows; ++r) {
    w.row(s.expert, r, row);
    double acc = 0;
    for (int64_t c = 0; c < n_cols; ++c) acc += a.get(s.a_at + c) * row[static_cast<size_t>(c)];
    y[static_cast<size_t>(r)] = acc;
  }
  return y;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

// The core: each of n_pairs pairs' GEMV against `w` into out[out_row, :]; with `up`, against gate
// `w` and `up` combined as silu(gate) * up.
void expert_gemv(const ExpertStack& w, const ExpertStack* up, const Tensor& a, int64_t n_pairs, const Sites& sites,
                 Tensor& out) {
  const int64_t n_rows = w.shape().n_rows;
  for (int64_t i = 0; i < n_pairs; ++i) {
    const std::optional<Site> s = sites(i);
    if (!s) continue;
    const std::vector<double> g = expert_dot(w, a, *s);
    const std::vector<double> u = up ? expert_dot(*up, a, *s) : std::vector<double>{};
    for (int64_t r = 0; r < n_rows; ++r) {
      const size_t k = static_cast<size_t>(r);
      out.set(s->out_row * n_rows + r, up ? silu(g[k]) * u[k] : g[k]);
    }
  }
}

// Adapters: how each variant places pair i.
Sites strided(const int32_t* ids, int64_t a_offset, int64_t stride) {
  return [=](int64_t i) { return Site{a_offset + i * stride, ids[i], i}; };
}
Sites batched(const int32_t* ids, const GemvQuantMoeIdBatchedParams& p) {
  return [=, &p](int64_t i) {
    return Site{(i / p.top_k) * p.src1_outer_stride + (i % p.top_k) * p.src1_inner_stride, ids[i], i};
  };
}

// gemm_quant_moe_id: pair ids t * top_k + s listed in ids[e, i < tpe[e]] (stale slots past tpe[e] are
// never read); ne11 1 reads a's row t, ne11 top_k row t * top_k + s. Pairs no expert lists are left
// unwritten (the op's OutputRule does not compare them).
void moe_gemm(const GemmQuantMoeIdParams& p, TensorMap& t) {
  const int32_t* ids = t.at("ids").as<int32_t>();
  const int32_t* tpe = t.at("tpe").as<int32_t>();
  std::vector<Site> listed;
  for (int64_t e = 0; e < p.w.num_experts; ++e)
    for (int64_t i = 0; i < tpe[e]; ++i) {
      const int64_t pair = ids[e * p.max_per_expert + i];
      listed.push_back({(p.ne11 == 1 ? pair / p.top_k : pair) * p.w.n_cols, e, pair});
    }
  expert_gemv(ExpertStack(p.w, t.at("weights")), nullptr, t.at("a"), static_cast<int64_t>(listed.size()),
              [&](int64_t i) { return std::optional<Site>(listed[static_cast<size_t>(i)]); }, t.at("out"));
}

}  // namespace

void gemv_quant_moe_id(const GemvQuantMoeIdParams& p, TensorMap& t) {
  expert_gemv(ExpertStack(p.w, t.at("weights")), nullptr, t.at("a"), p.n_selected,
              strided(t.at("ids").as<int32_t>(), 0, p.src1_stride), t.at("out"));
}

void gemv_quant_moe_id_offset(const GemvQuantMoeIdOffsetParams& p, TensorMap& t) {
  expert_gemv(ExpertStack(p.w, t.at("weights")), nullptr, t.at("a"), p.n_selected,
              strided(t.at("ids").as<int32_t>() + p.ids_offset, p.a_offset, p.src1_stride), t.at("out"));
}

void gemv_quant_moe_id_batched(const GemvQuantMoeIdBatchedParams& p, TensorMap& t) {
  expert_gemv(ExpertStack(p.w, t.at("weights")), nullptr, t.at("a"), p.m * p.top_k,
              batched(t.at("ids").as<int32_t>(), p), t.at("out"));
}

void gemv_quant_moe_id_gate_up_silu(const GemvQuantMoeIdGateUpSiluParams& p, TensorMap& t) {
  const ExpertStack up(p.w, t.at("up_w"));
  expert_gemv(ExpertStack(p.w, t.at("gate_w")), &up, t.at("a"), p.n_selected,
              strided(t.at("ids").as<int32_t>(), 0, 0), t.at("silu_out"));
}

void gemv_quant_moe_id_gate_up_silu_batched(const GemvQuantMoeIdBatchedParams& p, TensorMap& t) {
  const ExpertStack up(p.w, t.at("up_w"));
  expert_gemv(ExpertStack(p.w, t.at("gate_w")), &up, t.at("a"), p.m * p.top_k,
              batched(t.at("ids").as<int32_t>(), p), t.at("silu_out"));
}

void gemm_quant_moe_id(const GemmQuantMoeIdParams& p, TensorMap& t) { moe_gemm(p, t); }

// The same computation: the dispatch grid a backend derives from tpe is not part of the case.
void gemm_quant_moe_id_indirect(const GemmQuantMoeIdParams& p, TensorMap& t) { moe_gemm(p, t); }

}  // namespace ts::ref
