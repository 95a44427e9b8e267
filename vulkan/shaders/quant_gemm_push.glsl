// The tiled quant GEMM's push constants (gemm_quant.comp and its MoE build, planned by vulkan/quant/quant_gemm.cpp and vulkan/moe/moe_experts.cpp): one list, the shader's block and its C++ mirror both expanded from it (push.glsl,
// vulkan/runtime/push_block.h).
#define TS_QUANT_GEMM_PUSH(U, F, A) \
  /* as the GEMV's; the MoE build: n rows per expert, and its routing */ \
  U(m) U(n) U(k) U(ldo) U(n_off) U(experts) U(max_per_expert) U(top_k) U(ne11)

#ifdef __cplusplus
#include "vulkan/runtime/push_block.h"
TS_PUSH_STRUCT(QuantGemmPush, TS_QUANT_GEMM_PUSH)
#else
#include "push.glsl"
TS_PUSH_BLOCK(TS_QUANT_GEMM_PUSH)
#endif
