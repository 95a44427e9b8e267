#pragma once
// The inner loops of the cpu's expert-GEMV engine (cpu/moe_experts.cpp): rows [r0, r1) of ONE expert's
// weights against the n activation rows of the pairs routed to it. Each weight row is read from memory
// once and reused from L1 by every pair, so an expert's weights stream once per call however many
// pairs chose it. Results: out[i * ldo + (r - r0)] for pair i. Runtime-dispatched (Highway) wrappers
// over the quant family's per-kind dots (cpu/quant_dot-inl.h) and the plain rows' F32 dot (cpu/simd-inl.h).
#include <cstdint>

#include "core/dtype.h"
#include "core/kinds.h"
#include "cpu/quant_act.h"

namespace ts::cpu::moe {

// GGUF rows on activations quantized to int8: a[i] (blocks of 32: Q4_0, Q4_1, Q8_0) or ak[i] (blocks
// of 256: the K kinds), whichever the kind takes; the other may be null.
void rows_int8(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const ActQ8* a,
               const ActQ8K* ak, int64_t n, float* out, int64_t ldo);

// GGUF rows on F32 activations a32[i] with their per-16 sums sums[i]: exact up to F32 accumulation.
void rows_exact(QuantKind kind, const uint8_t* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32,
                const float* const* sums, int64_t n, float* out, int64_t ldo);

// Plain rows (F32, F16 or BF16 weights of dtype dt) on F32 activations a32[i].
void rows_plain(DType dt, const void* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32, int64_t n,
                float* out, int64_t ldo);

}  // namespace ts::cpu::moe
