#pragma once
// The MoE combine kernels' F32 SiLU product (cpu/moe/moe_combine.cpp), shared with the expert-GEMV engine's
// fused gate + up + SiLU epilogue: one formula for silu_mul_stacked and the fused op.
#include <cstdint>

namespace ts::cpu::moe {

// out[i] = silu(g[i]) * u[i] = g[i] / (1 + exp(-g[i])) * u[i], in F32 (out may alias g or u).
void silu_mul_f32(const float* g, const float* u, float* out, int64_t n);

}  // namespace ts::cpu::moe
