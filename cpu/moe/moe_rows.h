#pragma once
// The expert-GEMV engine's (cpu/moe/moe_experts.cpp) rows of plain experts: rows [r0, r1) of ONE expert's
// F32 / F16 / BF16 weights against the n activation rows of the pairs routed to it, each weight row
// read from memory once and reused from L1 by every pair. Results: out[i * ldo + (r - r0)] for pair i.
// (GGUF experts run the quant family's row kernels, cpu/quant/quant_rows.h.)
#include <cstdint>

#include "core/dtype.h"

namespace ts::cpu::moe {

// Plain rows (F32, F16 or BF16 weights of dtype dt) on F32 activations a32[i].
void rows_plain(DType dt, const void* w, int64_t n_cols, int64_t r0, int64_t r1, const float* const* a32, int64_t n,
                float* out, int64_t ldo);

}  // namespace ts::cpu::moe
