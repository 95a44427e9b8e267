#pragma once
// Shared by the cpu backend's quant GEMMs (cpu/quant/quant_gemm.cpp, cpu/quant/quant_gptq.cpp): activations
// widened to F32 once per call, the GGUF GEMM on them, and the F32 staging of F16 / BF16 outputs.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/kinds.h"
#include "core/metrics.h"
#include "core/tensor.h"
#include "core/quant/int8_route.h"
#include "cpu/quant/quant_act.h"
#include "cpu/runtime/scratch.h"

namespace ts::cpu {

// a[m, k] in F32, and the rows quantized to int8 when asked (with finite activations: `int8` in blocks
// of 32 for Q4_0 / Q4_1 / Q8_0, `int8_k` in blocks of 256 for the K kinds), or else, for a GEMV
// (m <= 4), the sums of each 16 values of every row (the exact GEMV).
struct QuantActivations {
  QuantActivations() = default;
  QuantActivations(DType dt, const void* a, int64_t m, int64_t k, bool int8 = false, bool int8_k = false) {
    reset(dt, a, m, k, int8, int8_k);
  }
  // The same for new activations, in the buffers of the last: a caller that keeps one (a thread's
  // own, for a GEMV run step after step) allocates nothing once they are large enough.
  void reset(DType dt, const void* a, int64_t m, int64_t k, bool int8 = false, bool int8_k = false);
  int64_t m = 0, k = 0;
  // Every activation finite. Otherwise the products take the decoded route (each weight decoded to
  // F32, then a * w element by element), where an Inf meets each weight once as the reference's does
  // (+-Inf, or NaN against a zero weight); the factored exact dot (scale x sum(q a) + bias x sum(a))
  // would meet it twice and turn the reference's Inf into Inf - Inf = NaN.
  bool finite = true;
  // In the thread's scratch pools (cpu/runtime/scratch.h): made again for a call of the same shape, they
  // allocate nothing.
  ScratchVector<float> a32;
  ScratchVector<float> sums;
  ScratchVector<ActQ8> rows8;    // one per row when quantized in blocks of 32, else empty
  ScratchVector<ActQ8K> rows8k;  // one per row when quantized in blocks of 256, else empty
  ScratchVector<int8_t> q8, q8p, q8k;
  ScratchVector<float> d8, fs32, fs16, d8k;
  ScratchVector<int16_t> bs16, bs32;
  ScratchVector<int32_t> block_sums;  // the quantizers' scratch

 private:
  void quantize_int8();
  void quantize_int8_k();
};

// Whether gptq's GEMV of m activation rows and `outputs` values per row quantizes its activations
// (a decode only: m <= 4; its kernels and tolerance in cpu/quant/quant_gptq.cpp agree through it).
bool int8_gemv(int64_t m, int64_t outputs);
// Whether a GGUF product of m activation rows and `outputs` values per row quantizes its activations:
// decode and prefill alike, whenever its m x outputs values are enough for the NMSE bound of
// int8_tolerance (the kernels and their tolerances agree through it).
bool int8_gguf(int64_t m, int64_t outputs);


// out[i * ldo + r] = a[i] . dequant(row r of w), for the n_rows GGUF rows of `kind` in w: on a's int8
// rows when `int8` and they exist (every activation finite), else exactly (the F32 GEMV for m <= 4,
// sgemm on decoded panels above).
void gguf_gemm(QuantKind kind, const QuantActivations& a, const uint8_t* w, int64_t n_rows, float* out, int64_t ldo,
               bool int8);

// Where a kernel writes its F32 results: out itself when it is F32, else `scratch` (elems values),
// which store_output then rounds into out.
float* output_f32(std::vector<float>& scratch, Tensor& out, int64_t elems);
void store_output(const std::vector<float>& scratch, Tensor& out);

}  // namespace ts::cpu
