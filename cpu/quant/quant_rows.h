#pragma once
// The GGUF row kernels every quantized matrix product on the cpu runs: rows [r0, r1) of one weight
// matrix against n activation rows, out[i * ldo + (r - r0)] for activation i. gemm_quant's decode and
// prefill (cpu/quant/quant_gemm.cpp) and the moe expert engine (cpu/moe/moe_experts.cpp) differ only in which
// rows they hand over, so a kind's dot product lives once (cpu/quant/quant_decode-inl.h,
// cpu/quant/quant_int8_dot-inl.h) and runs here.
// Runtime-dispatched (Highway).
#include <cstdint>

#include "core/kinds.h"
#include "cpu/quant/quant_act.h"

namespace ts::cpu {

// GGUF rows on activations quantized to int8: a[i] (blocks of 32: Q4_0, Q4_1, Q8_0) or ak[i] (blocks
// of 256: the K kinds), whichever the kind takes; the other may be null.
void rows_int8(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const ActQ8* a,
               const ActQ8K* ak, int64_t n, float* out, int64_t ldo);

// Whether rows_int8 takes the AVX-512 VNNI step (cpu/quant/quant_int8_vnni-inl.h), every kind's: the
// dispatched SIMD target is AVX-512, the CPU has VNNI, and allow_int8_vnni has not switched it off.
bool int8_vnni_step();
// Switches the VNNI step off (false) or back on for every later rows_int8 call, so that a test or a
// benchmark can run the 256-bit step beside it on the same data (their outputs are bit for bit equal).
void allow_int8_vnni(bool allow);
bool int8_vnni_allowed();  // what allow_int8_vnni last set (true at start)

// GGUF rows on F32 activations a32[i] with their per-16 sums sums[i]: exact up to F32 accumulation.
void rows_exact(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32,
                const float* const* sums, int64_t n, float* out, int64_t ldo);

}  // namespace ts::cpu
