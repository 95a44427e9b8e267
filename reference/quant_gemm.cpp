// Reference: the quant family's GEMMs. Weights decode exactly as the formats define them (GGUF rows
// through ggml's own dequantizers, in float, exact: see ref::dequantize; GPTQ / AWQ values as
// f16 scale x small integer, exact in double), then the sums run in double and round once.
#include <vector>

#include "core/quant/formats.h"
#include "core/quant/packing.h"
#include "reference/reference.h"

namespace ts::ref {

namespace {

// out[:, col0 : col0 + n_rows] (row stride ld) = a[m, n_cols] @ dequant(weight)^T for GGUF rows of `kind`.
void gguf_gemm(QuantKind kind, const Tensor& a, const uint8_t* weight, int64_t m, int64_t n_rows, int64_t n_cols,
               Tensor& out, int64_t ld, int64_t col0) {
  const quant::Format& f = quant::block_format(kind);
  const int64_t row_bytes = quant::row_bytes(f, n_cols);
  std::vector<float> w(static_cast<size_t>(n_cols));
  for (int64_t r = 0; r < n_rows; ++r) {
    f.dequantize_row(weight + r * row_bytes, w.data(), n_cols);
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t c = 0; c < n_cols; ++c) s += a.get(i * n_cols + c) * static_cast<double>(w[static_cast<size_t>(c)]);
      out.set(i * ld + col0 + r, s);
    }
  }
}

// out[m, n] = a[m, k] @ W with W[kk, j] = weight(kk, j) in double.
template <class WeightFn> void dense_gemm(const Tensor& a, int64_t m, int64_t k, int64_t n, WeightFn weight, Tensor& out) {
  std::vector<double> col(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) col[static_cast<size_t>(kk)] = weight(kk, j);
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += a.get(i * k + kk) * col[static_cast<size_t>(kk)];
      out.set(i * n + j, s);
    }
  }
}

}  // namespace

void gemm_quant(const GemmQuantParams& p, TensorMap& t) {
  gguf_gemm(p.kind, t.at("a"), t.at("weight").as<uint8_t>(), p.m, p.n_rows, p.n_cols, t.at("out"), p.n_rows, 0);
}

void gemm_quant_fused(const GemmQuantFusedParams& p, TensorMap& t) {
  int64_t col0 = 0;
  for (int i = 0; i < p.parts(); ++i) {
    gguf_gemm(p.kind[i], t.at("a"), t.at("weight." + std::to_string(i)).as<uint8_t>(), p.m, p.n_rows[i], p.n_cols,
              t.at("out"), p.total_rows(), col0);
    col0 += p.n_rows[i];
  }
}

void gemm_gptq(const GptqParams& p, TensorMap& t) {
  const int32_t* qweight = t.at("qweight").as<int32_t>();
  const int32_t* qzeros = t.at("qzeros").as<int32_t>();
  const Tensor& scales = t.at("scales");
  const int32_t* g_idx = p.desc_act ? t.at("g_idx").as<int32_t>() : nullptr;
  dense_gemm(t.at("a"), p.m, p.k, p.n, [&](int64_t kk, int64_t j) {
    const int64_t g = g_idx ? g_idx[kk] : kk / p.group_size;
    const double q = quant::gptq_code(qweight, p.n, p.bits, kk, j);
    return scales.get(g * p.n + j) * (q - static_cast<double>(quant::gptq_zero(qzeros, p.n, p.bits, g, j)));
  }, t.at("out"));
}

void gemm_awq(const AwqParams& p, TensorMap& t) {
  const int32_t* qweight = t.at("qweight").as<int32_t>();
  const int32_t* qzeros = t.at("qzeros").as<int32_t>();
  const Tensor& scales = t.at("scales");
  dense_gemm(t.at("a"), p.m, p.k, p.n, [&](int64_t kk, int64_t j) {
    const int64_t g = kk / p.group_size;
    const double q = quant::awq_code(qweight, p.n, kk, j);
    return scales.get(g * p.n + j) * (q - static_cast<double>(quant::awq_zero(qzeros, p.n, g, j)));
  }, t.at("out"));
}

}  // namespace ts::ref
