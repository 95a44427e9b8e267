// Reference: the moe family's expert GEMV / GEMM. One core (expert_gemv) runs every variant over the
// sites its pair view gives (core/ops/moe/pair_view.h: where pair i finds its activation row, its
// expert and its output row), so the loops exist once. Weights decode exactly (GGUF rows through the
// format table, as ref::gemm_quant does; plain rows as stored), sums run in double and round once;
// the fused gate + up + SiLU is silu(gate) * up of the two unrounded sums, rounded once.
#include <cmath>
#include <vector>

#include "core/ops/moe/pair_view.h"
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

using moe::Site;

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

// The core: each pair's GEMV against `w` into out[out_row, :]; with `up`, against gate `w` and `up`
// combined as silu(gate) * up.
void expert_gemv(const ExpertStack& w, const ExpertStack* up, const Tensor& a, const std::vector<Site>& sites,
                 Tensor& out) {
  const int64_t n_rows = w.shape().n_rows;
  for (const Site& s : sites) {
    const std::vector<double> g = expert_dot(w, a, s);
    const std::vector<double> u = up ? expert_dot(*up, a, s) : std::vector<double>{};
    for (int64_t r = 0; r < n_rows; ++r) {
      const size_t k = static_cast<size_t>(r);
      out.set(s.out_row * n_rows + r, up ? silu(g[k]) * u[k] : g[k]);
    }
  }
}

// The GEMVs' pairs from their view (core/ops/moe/pair_view.h), experts from ids.
template <class P> std::vector<Site> sites(const P& p, const TensorMap& t) {
  std::vector<Site> v;
  moe::for_each_pair(moe::pair_view(p), t.at("ids").as<int32_t>(), [&](const Site& s) { v.push_back(s); });
  return v;
}

// gemv against `weights` into out, or with `silu` the fused silu(gate) * up of gate_w and up_w into
// silu_out.
template <class P> void gemv(const P& p, TensorMap& t, bool silu) {
  if (silu) {
    const ExpertStack up(p.w, t.at("up_w"));
    expert_gemv(ExpertStack(p.w, t.at("gate_w")), &up, t.at("a"), sites(p, t), t.at("silu_out"));
  } else {
    expert_gemv(ExpertStack(p.w, t.at("weights")), nullptr, t.at("a"), sites(p, t), t.at("out"));
  }
}

// gemm_quant_moe_id: the pairs the experts' lists name (the pairs no expert lists are left unwritten:
// the op's OutputRule does not compare them).
void moe_gemm(const GemmQuantMoeIdParams& p, TensorMap& t) {
  std::vector<Site> listed;
  moe::for_each_listed(p, t.at("ids").as<int32_t>(), t.at("tpe").as<int32_t>(),
                       [&](const Site& s) { listed.push_back(s); });
  expert_gemv(ExpertStack(p.w, t.at("weights")), nullptr, t.at("a"), listed, t.at("out"));
}

}  // namespace

void gemv_quant_moe_id(const GemvQuantMoeIdParams& p, TensorMap& t) { gemv(p, t, false); }
void gemv_quant_moe_id_offset(const GemvQuantMoeIdOffsetParams& p, TensorMap& t) { gemv(p, t, false); }
void gemv_quant_moe_id_batched(const GemvQuantMoeIdBatchedParams& p, TensorMap& t) { gemv(p, t, false); }
void gemv_quant_moe_id_gate_up_silu(const GemvQuantMoeIdGateUpSiluParams& p, TensorMap& t) { gemv(p, t, true); }
void gemv_quant_moe_id_gate_up_silu_batched(const GemvQuantMoeIdBatchedParams& p, TensorMap& t) { gemv(p, t, true); }

void gemm_quant_moe_id(const GemmQuantMoeIdParams& p, TensorMap& t) { moe_gemm(p, t); }

// The same computation: the dispatch grid a backend derives from tpe is not part of the case.
void gemm_quant_moe_id_indirect(const GemmQuantMoeIdParams& p, TensorMap& t) { moe_gemm(p, t); }

}  // namespace ts::ref
