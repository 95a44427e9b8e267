// The decode GEMVs' push constants (gemv_quant.comp, and gemv_quant_m1.comp's block is tested against the same mirror; planned by vulkan/quant/quant_gemm.cpp): one list, the shader's block and its C++ mirror both expanded from it (push.glsl,
// vulkan/runtime/push_block.h).
#define TS_QUANT_GEMV_PUSH(U, F, A) \
  /* out columns n_off .. n_off + n of rows ldo wide = a [m, k] @ dequant(w [n, k])^T */ \
  U(m) U(n) U(k) U(ldo) U(n_off)

#ifdef __cplusplus
#include "vulkan/runtime/push_block.h"
TS_PUSH_STRUCT(QuantGemvPush, TS_QUANT_GEMV_PUSH)
#else
#include "push.glsl"
TS_PUSH_BLOCK(TS_QUANT_GEMV_PUSH)
#endif
