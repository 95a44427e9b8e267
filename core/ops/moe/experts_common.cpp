#include "core/ops/moe/experts_common.h"

#include <cmath>
#include <limits>

#include "core/ops/describe.h"
#include "core/ops/quant/gemm_common.h"
#include "core/quant/formats.h"

namespace ts::moe_experts {

using namespace describe;

TensorDecl weights(const std::string& name, const MoeExperts& w) {
  if (const quant::Format* f = quant::format(w.kind))
    return pinned(in(name, {w.num_experts, w.n_rows, quant::row_bytes(*f, w.n_cols)}), DType::U8);
  return dtype_from(in(name, {w.num_experts, w.n_rows, w.n_cols}), "kind", w.kind);
}

void check(const MoeExperts& w) {
  positive(w.num_experts, "num_experts");
  positive(w.n_rows, "n_rows");
  if (const quant::Format* f = quant::format(w.kind))
    quant::check_row(*f, w.n_cols, "n_cols");
  else
    positive(w.n_cols, "n_cols");
}

void check_weight_bytes(const TensorMap& t, const std::string& name, const MoeExperts& w) {
  auto it = t.find(name);
  const quant::Format* f = quant::format(w.kind);
  if (it == t.end() || it->second.shape().size() != 3 || !f) return;  // the declaration check reports these
  if (w.n_cols <= 0 || w.n_cols % f->block_elems != 0 ||
      w.n_cols / f->block_elems > std::numeric_limits<int64_t>::max() / f->block_bytes)
    return;  // the parameter checks report these
  const int64_t want = quant::row_bytes(*f, w.n_cols), got = it->second.shape()[2];
  ts::check(got == want, "tensor '{}': expert rows of {} bytes, expected {} ({} {} values = {} blocks of {} bytes)",
            name, got, want, w.n_cols, enum_name(w.kind), w.n_cols / f->block_elems, f->block_bytes);
}

void check_plain_kind(const MoeExperts& w, const TensorMap& t) {
  if (quant::format(w.kind)) return;
  const DType a = t.at("a").dtype();
  ts::check(storage_dtype(w.kind) == a, "parameter 'kind' = {} names plain weights in the case dtype, but the case is {}",
            enum_name(w.kind), dtype_name(a));
}

void check_expert_ids(const TensorMap& t, const char* name, int64_t begin, int64_t count, int64_t num_experts) {
  const int32_t* v = t.at(name).as<int32_t>();
  for (int64_t i = begin; i < begin + count; ++i)
    ts::check(v[i] >= 0 && v[i] < num_experts, "{}[{}] = {} is not an expert: must be in [0, num_experts = {})", name,
              i, v[i], num_experts);
}

void check_top_k(int64_t top_k, int64_t num_experts) {
  ts::check(top_k <= num_experts, "parameter 'top_k' = {} is larger than num_experts = {}", top_k, num_experts);
}

void check_stride(int64_t stride, int64_t n_cols, const char* name) {
  ts::check(stride == 0 || stride >= n_cols, "parameter '{}' = {} must be 0 (broadcast) or at least n_cols = {}", name,
            stride, n_cols);
}

void fill_weights(const MoeExperts& w, Tensor& weights, Rng& r) {
  if (quant::format(w.kind))
    quant_gemm::gguf_weight(w.kind, w.num_experts * w.n_rows, w.n_cols, weights, r);  // one row table, all experts
  else
    normal(weights, r);
}

void route(int64_t m, int64_t top_k, int64_t num_experts, int32_t* ids, Rng& r) {
  std::vector<uint8_t> taken(static_cast<size_t>(num_experts));
  for (int64_t t = 0; t < m; ++t) {
    std::fill(taken.begin(), taken.end(), 0);
    for (int64_t s = 0; s < top_k; ++s) {
      int64_t e = t == 0 && s == 0 ? num_experts - 1 : r.below(2) == 0 ? r.below(std::min<int64_t>(2, num_experts))
                                                                        : r.below(num_experts);
      while (taken[static_cast<size_t>(e)]) e = (e + 1) % num_experts;  // the next free expert
      taken[static_cast<size_t>(e)] = 1;
      ids[t * top_k + s] = static_cast<int32_t>(e);
    }
  }
}

void route_pairs(int64_t n, int64_t num_experts, int32_t* ids, Rng& r) {
  if (n <= num_experts)
    route(1, n, num_experts, ids, r);
  else
    route(n, 1, num_experts, ids, r);
}

double routed_experts(int64_t n, int64_t num_experts) {
  return n <= num_experts ? static_cast<double>(n) : selected_experts(num_experts, 1, n);
}

double selected_experts(int64_t num_experts, int64_t top_k, int64_t m) {
  const double e = static_cast<double>(num_experts);
  return e * (1.0 - std::pow(1.0 - static_cast<double>(top_k) / e, static_cast<double>(m)));
}

double expert_bytes(const MoeExperts& w, DType dt) {
  if (const quant::Format* f = quant::format(w.kind)) return static_cast<double>(w.n_rows * quant::row_bytes(*f, w.n_cols));
  return bytes(dt, static_cast<double>(w.n_rows) * static_cast<double>(w.n_cols));
}

double weights_max_abs(const MoeExperts& w, const TensorMap& in, const std::string& name) {
  const Tensor& t = magnitude::input(in, name);
  return quant::format(w.kind) ? magnitude::max_abs_gguf(t, w.kind, w.n_cols) : magnitude::max_abs(t);
}

Tolerance dot(DType out, const MoeExperts& w, const TensorMap& in) {
  return quant_gemm::tolerance(out, w.n_cols, magnitude::max_abs(in, "a"), weights_max_abs(w, in, "weights"));
}

Tolerance silu_product(DType out, const MoeExperts& w, const TensorMap& in) {
  const double n = static_cast<double>(w.n_cols), a = magnitude::max_abs(in, "a");
  const double gate_term = a * weights_max_abs(w, in, "gate_w"), up_term = a * weights_max_abs(w, in, "up_w");
  const double gate_err = tol::accumulation(DType::F32, n, gate_term, "").atol;
  const double up_err = tol::accumulation(DType::F32, n, up_term, "").atol;
  // Each factor's size: sqrt(n) times its largest term, the model tol::accumulation's partial sums follow.
  const double gate_bound = std::sqrt(n) * gate_term, up_bound = std::sqrt(n) * up_term;
  const double u32 = 0x1p-24;
  return {1.1 * gate_err * up_bound + up_err * gate_bound + tol::underflow_floor(out), 2 * unit_roundoff(out) + 8 * u32,
          fmt::format("silu(gate) * up over {} terms, terms |a||w| <= {} (gate), {} (up) from max|a| x max|dequantized "
                      "gate_w / up_w|: 1.1 x gate's accumulation error {:.3g} x up's size sqrt(n) x its term + up's "
                      "error {:.3g} x gate's size abs; 8 F32 ops + 2 u_{} rel",
                      w.n_cols, magnitude::str(gate_term), magnitude::str(up_term), gate_err, up_err, dtype_name(out))};
}

Cost cost(const MoeExperts& w, DType dt, int64_t stacks, double experts, int64_t pairs, int64_t a_rows) {
  const double st = static_cast<double>(stacks), pr = static_cast<double>(pairs);
  const double rows = static_cast<double>(w.n_rows), cols = static_cast<double>(w.n_cols);
  return Cost{2.0 * st * pr * rows * cols,
              st * experts * expert_bytes(w, dt) + bytes(dt, static_cast<double>(a_rows) * cols + pr * rows)};
}

void check_batched(const GemvQuantMoeIdBatchedParams& p) {
  positive(p.m, "m");
  positive(p.top_k, "top_k");
  check_top_k(p.top_k, p.w.num_experts);
  check_stride(p.src1_outer_stride, p.w.n_cols, "src1_outer_stride");
  check_stride(p.src1_inner_stride, p.w.n_cols, "src1_inner_stride");
  checked::mul(p.m, p.top_k, "m x top_k");
}

namespace {
GemvQuantMoeIdBatchedParams batched(QuantKind kind, int64_t experts, int64_t n_rows, int64_t n_cols, int64_t m,
                                    int64_t top_k, int64_t outer, int64_t inner) {
  return {{kind, experts, n_rows, n_cols}, m, top_k, outer, inner,
          a_length((m - 1) * outer + (top_k - 1) * inner, n_cols)};
}
}  // namespace

std::vector<Preset<GemvQuantMoeIdBatchedParams>> batched_cases() {
  using enum QuantKind;
  return {
      {"Q4_0_e8_r5_k64_m3_top2_gate", Tier::Smoke, batched(Q4_0, 8, 5, 64, 3, 2, 64, 0)},
      {"Q8_0_e8_r4_k96_m9_top2_down", Tier::Ci, batched(Q8_0, 8, 4, 96, 9, 2, 2 * 96, 96)},
      {"Q4_K_e64_r3_k256_m4_top8_down_strided", Tier::Ci, batched(Q4_K, 64, 3, 256, 4, 8, 8 * 300 + 44, 300)},
      {"Q6_K_e128_r2_k256_m2_top1_gate", Tier::Ci, batched(Q6_K, 128, 2, 256, 2, 1, 256, 0), {DType::F32}},
      {"F32_e8_r6_k40_m5_top2_gate_stride41", Tier::Ci, batched(F32, 8, 6, 40, 5, 2, 41, 0), {DType::F32}},
      {"F16_e64_r3_k24_m3_top8_down", Tier::Ci, batched(F16, 64, 3, 24, 3, 8, 8 * 24, 24), {DType::F16}},
      {"BF16_e8_r5_k33_m7_top1_gate", Tier::Ci, batched(BF16, 8, 5, 33, 7, 1, 33, 0), {DType::BF16}},
  };
}

std::vector<Preset<GemvQuantMoeIdBatchedParams>> batched_benches() {
  std::vector<Preset<GemvQuantMoeIdBatchedParams>> v;
  for (const auto& [m, k] : bench_models())
    v.push_back({bench_name(m, k, "b16"), Tier::Full, batched(k, m.experts, m.ffn, m.hidden, 16, m.top_k, m.hidden, 0),
                 bench_dtypes(k)});
  return v;
}

const std::vector<Model>& models() {
  static const std::vector<Model> m = {{"mixtral_8x7b", 8, 2, 4096, 14336},
                                       {"qwen3_30b_a3b", 128, 8, 2048, 768},
                                       {"deepseek_v2_lite", 64, 6, 2048, 1408}};
  return m;
}

const std::vector<std::pair<Model, QuantKind>>& bench_models() {
  static const std::vector<std::pair<Model, QuantKind>> v = [] {
    std::vector<std::pair<Model, QuantKind>> out;
    for (const Model& m : models())
      for (QuantKind k : {QuantKind::Q4_K, QuantKind::F16})
        // Mixtral's F16 expert stack (gate and up: 1.9 GB) is past the 1 GiB every preset keeps to (a
        // 4 GiB machine's default memory budget, tests/hostile_input_test.cpp): its Q4_K stack stands in.
        if (!(k == QuantKind::F16 && m.ffn * m.hidden * m.experts > (int64_t{1} << 28))) out.emplace_back(m, k);
    return out;
  }();
  return v;
}

std::vector<DType> bench_dtypes(QuantKind k) { return {quant::format(k) ? DType::F32 : storage_dtype(k)}; }

std::string bench_name(const Model& m, QuantKind k, const char* rest) {
  return fmt::format("{}_{}_{}", m.name, enum_name(k), rest);
}

}  // namespace ts::moe_experts
