// gemm_quant: out[m, n_rows] = a[m, n_cols] @ dequant(weight)^T, weight U8 [n_rows, row_bytes] the GGUF
// blocks of `kind`, exactly a GGUF tensor's bytes (the seed's load_quant + gemm_quant).
#include "core/ops/describe.h"
#include "core/ops/quant/gemm_common.h"
#include "core/ops/quant/rows_common.h"

namespace ts {
using namespace describe;

namespace {

std::vector<Preset<GemmQuantParams>> cases() {
  std::vector<Preset<GemmQuantParams>> v;
  for (QuantKind k : block_kinds()) {
    // Several blocks per row and a count that is no power of two, so a kernel's block loop and its
    // tail are both reached: 5 legacy blocks, 3 super-blocks.
    const int64_t n_cols = quant::block_format(k).block_elems == 32 ? 160 : 768;
    for (int64_t m : {1, 7, 64})
      for (int64_t rows : {1, 5, 129}) {
        const Tier tier = (m == 1 && rows == 5) ? Tier::Smoke : Tier::Ci;
        v.push_back({named(k, fmt::format("m{}_n{}_k{}", m, rows, n_cols)), tier, {k, m, rows, n_cols}, kFloatDtypes});
      }
    // A model's row length (4096) at decode and a small prefill.
    v.push_back({named(k, "m1_n64_k4096"), Tier::Full, {k, 1, 64, 4096}, {DType::F32}});
    v.push_back({named(k, "m33_n96_k4096"), Tier::Full, {k, 33, 96, 4096}, {DType::F32}});
  }
  return v;
}

std::vector<Preset<GemmQuantParams>> benches() {
  std::vector<Preset<GemmQuantParams>> v;
  for (QuantKind k : block_kinds()) {
    // Llama-3-8B's down projection and its transpose shape (gate / up) at decode, and a prefill.
    v.push_back({named(k, "m1_n4096_k14336"), Tier::Full, {k, 1, 4096, 14336}, {DType::F32}});
    v.push_back({named(k, "m1_n14336_k4096"), Tier::Full, {k, 1, 14336, 4096}, {DType::F32}});
    v.push_back({named(k, "m512_n4096_k4096"), Tier::Full, {k, 512, 4096, 4096}, {DType::F32}});
  }
  return v;
}

}  // namespace

const Op& op_gemm_quant() {
  static const TypedOp<GemmQuantParams> op({
      .name = "gemm_quant",
      .family = "quant",
      .summary = "out[m,n_rows] = a[m,n_cols] @ dequant(weight[n_rows,row_bytes])^T (GGUF kind)",
      .tensors = [](const GemmQuantParams& p) {
        const QuantRowsParams rows{p.kind, p.n_rows, p.n_cols};
        return std::vector{in("a", {p.m, p.n_cols}),
                           pinned(in("weight", quant_rows::bytes_shape(rows)), DType::U8),
                           out("out", {p.m, p.n_rows})};
      },
      .validate_params = [](const GemmQuantParams& p) {
        positive(p.m, "m");
        quant_rows::check({p.kind, p.n_rows, p.n_cols});
      },
      .infer = [](GemmQuantParams& p, const TensorMap& t) { quant_rows::check_block_rows(t, "weight", p.kind, p.n_cols); },
      .generate = [](const GemmQuantParams& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        quant_gemm::gguf_weight(p.kind, p.n_rows, p.n_cols, t["weight"], r);
      },
      .tolerance = [](const GemmQuantParams& p, DType dt, const TensorMap& in) {
        return quant_gemm::tolerance(dt, p.n_cols, magnitude::max_abs(in, "a"),
                                     magnitude::max_abs_gguf(magnitude::input(in, "weight"), p.kind, p.n_cols));
      },
      .cost = [](const GemmQuantParams& p, DType dt) {
        return quant_gemm::cost(quant_rows::block_bytes_total({p.kind, p.n_rows, p.n_cols}), p.m, p.n_rows, p.n_cols, dt);
      },
      .cases = cases(),
      .benches = benches(),
  });
  return op;
}

}  // namespace ts
