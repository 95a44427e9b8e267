// gemm_quant_fused: a[m, n_cols] against parts weight.0, weight.1, ... of GGUF kinds kind.0, kind.1,
// ... (n_rows.i rows each, sharing n_cols); out[m, sum n_rows.i] holds the parts' outputs side by side,
// part 0 first (the seed's load_quant_fused: a fused QKV whose V is of another kind than Q and K).
#include "core/ops/describe.h"
#include "core/ops/quant/gemm_common.h"
#include "core/ops/quant/rows_common.h"

namespace ts {
using namespace describe;

namespace {

std::string part(const char* name, int i) { return fmt::format("{}.{}", name, i); }

QuantRowsParams part_rows(const GemmQuantFusedParams& p, int i) { return {p.kind[i], p.n_rows[i], p.n_cols}; }

GemmQuantFusedParams fused(int64_t m, int64_t n_cols, std::vector<std::pair<QuantKind, int64_t>> parts) {
  GemmQuantFusedParams p;
  p.m = m;
  p.n_cols = n_cols;
  for (size_t i = 0; i < parts.size(); ++i) std::tie(p.kind[i], p.n_rows[i]) = parts[i];
  return p;
}

std::vector<Preset<GemmQuantFusedParams>> cases() {
  using enum QuantKind;
  std::vector<Preset<GemmQuantFusedParams>> v;
  for (int64_t m : {1, 7}) {
    const Tier tier = m == 1 ? Tier::Smoke : Tier::Ci;
    // Qwen3's qkv of a Q4_K_M file: Q and K in Q4_K, V in Q6_K; row counts no tile divides.
    v.push_back({fmt::format("Q4_K_Q4_K_Q6_K_m{}_k512", m), tier, fused(m, 512, {{Q4_K, 33}, {Q4_K, 9}, {Q6_K, 9}})});
    // Two parts of legacy and k kinds (gate and up of different files), and three different kinds.
    v.push_back({fmt::format("Q8_0_Q4_K_m{}_k256", m), Tier::Ci, fused(m, 256, {{Q8_0, 5}, {Q4_K, 17}})});
    v.push_back({fmt::format("Q4_0_Q5_K_Q4_1_m{}_k256", m), Tier::Ci, fused(m, 256, {{Q4_0, 3}, {Q5_K, 1}, {Q4_1, 7}})});
  }
  v.push_back({"Q4_K_Q4_K_Q6_K_Q8_0_m64_k768", Tier::Ci, fused(64, 768, {{Q4_K, 16}, {Q4_K, 4}, {Q6_K, 4}, {Q8_0, 3}}),
               {DType::F32}});
  return v;
}

}  // namespace

const Op& op_gemm_quant_fused() {
  static const TypedOp<GemmQuantFusedParams> op({
      .name = "gemm_quant_fused",
      .family = "quant",
      .summary = "out[m, sum n_rows.i] = a[m,n_cols] @ dequant(weight.i)^T per part, side by side (GGUF kinds)",
      .tensors = [](const GemmQuantFusedParams& p) {
        std::vector<TensorDecl> d{in("a", {p.m, p.n_cols})};
        for (int i = 0; i < p.parts(); ++i)
          d.push_back(pinned(in(part("weight", i), quant_rows::bytes_shape(part_rows(p, i))), DType::U8));
        d.push_back(out("out", {p.m, p.total_rows()}));
        return d;
      },
      .validate_params = [](const GemmQuantFusedParams& p) {
        positive(p.m, "m");
        for (int i = 0; i < p.parts(); ++i) {
          positive(p.n_rows[i], part("n_rows", i).c_str());
          quant::check_row(quant::block_format(p.kind[i], part("kind", i).c_str()), p.n_cols, "n_cols");
        }
      },
      .infer = [](GemmQuantFusedParams& p, const TensorMap& t) {
        for (int i = 0; i < p.parts(); ++i) quant_rows::check_block_rows(t, part("weight", i), p.kind[i], p.n_cols);
      },
      .generate = [](const GemmQuantFusedParams& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        for (int i = 0; i < p.parts(); ++i) quant_gemm::gguf_weight(p.kind[i], p.n_rows[i], p.n_cols, t[part("weight", i)], r);
      },
      .tolerance = [](const GemmQuantFusedParams& p, DType dt, const TensorMap& in) {
        double w_max = 0;
        for (int i = 0; i < p.parts(); ++i)
          w_max = std::max(w_max, magnitude::max_abs_gguf(magnitude::input(in, "weight." + std::to_string(i)),
                                                          p.kind[i], p.n_cols));
        return quant_gemm::tolerance(dt, p.n_cols, magnitude::max_abs(in, "a"), w_max);
      },
      .cost = [](const GemmQuantFusedParams& p, DType dt) {
        double w = 0;
        for (int i = 0; i < p.parts(); ++i) w += quant_rows::block_bytes_total(part_rows(p, i));
        return quant_gemm::cost(w, p.m, p.total_rows(), p.n_cols, dt);
      },
      .cases = cases(),
      // Llama-3-8B's attention input projection as a Q4_K_M file stores it: Q and K in Q4_K, V in Q6_K.
      .benches = {{"llama3_8b_qkv_Q4_K_Q6_K_m1", Tier::Full,
                   fused(1, 4096, {{QuantKind::Q4_K, 4096}, {QuantKind::Q4_K, 1024}, {QuantKind::Q6_K, 1024}}), {DType::F32}},
                  {"llama3_8b_qkv_Q4_K_Q6_K_m512", Tier::Full,
                   fused(512, 4096, {{QuantKind::Q4_K, 4096}, {QuantKind::Q4_K, 1024}, {QuantKind::Q6_K, 1024}}), {DType::F32}}},
  });
  return op;
}

}  // namespace ts
