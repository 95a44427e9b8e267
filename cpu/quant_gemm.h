#pragma once
// Shared by the cpu backend's quant GEMMs (cpu/quant_gemm.cpp, cpu/quant_gptq.cpp): activations
// widened to F32 once per call, the GGUF GEMM on them, and the F32 staging of F16 / BF16 outputs.
#include <cstdint>
#include <vector>

#include "core/kinds.h"
#include "core/tensor.h"
#include "cpu/quant_act.h"

namespace ts::cpu {

// a[m, k] in F32, and for a GEMV (small m) either the sums of each 16 values of every row (the exact
// GEMV) or, with `int8` and finite activations, the rows quantized to int8 blocks (the fast one).
struct QuantActivations {
  QuantActivations(DType dt, const void* a, int64_t m, int64_t k, bool int8 = false);
  int64_t m, k;
  std::vector<float> a32;
  std::vector<float> sums;
  std::vector<ActQ8> rows8;  // one per row when quantized, else empty
  std::vector<int8_t> q8;
  std::vector<float> d8, fs32, fs16;

 private:
  void quantize_int8();
};

// Whether the GGUF GEMV of m activation rows and `outputs` values per row quantizes its activations
// (the kernels and their tolerance, int8_gemv_tolerance in cpu/quant_gemm.cpp, agree through it).
bool int8_gemv(int64_t m, int64_t outputs);

// out[i * ldo + r] = a[i] . dequant(row r of w), for the n_rows GGUF rows of `kind` in w.
void gguf_gemm(QuantKind kind, const QuantActivations& a, const uint8_t* w, int64_t n_rows, float* out, int64_t ldo);

// Where a kernel writes its F32 results: out itself when it is F32, else `scratch` (elems values),
// which store_output then rounds into out.
float* output_f32(std::vector<float>& scratch, Tensor& out, int64_t elems);
void store_output(const std::vector<float>& scratch, Tensor& out);

}  // namespace ts::cpu
