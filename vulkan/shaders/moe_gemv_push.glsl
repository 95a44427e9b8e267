// The expert GEMV's push constants (moe_gemv.comp, planned by vulkan/moe/moe_experts.cpp): one list, the shader's block and its C++ mirror both expanded from it (push.glsl,
// vulkan/runtime/push_block.h).
#define TS_MOE_GEMV_PUSH(U, F, A) \
  /* pairs, the weight stacks' rows and columns, the pair view (a_off, ids_off, top_k, outer, inner) */ \
  U(pairs) U(n_rows) U(n_cols) U(a_off) U(ids_off) U(top_k) U(outer) U(inner) U(experts)

#ifdef __cplusplus
#include "vulkan/runtime/push_block.h"
TS_PUSH_STRUCT(MoeGemvPush, TS_MOE_GEMV_PUSH)
#else
#include "push.glsl"
TS_PUSH_BLOCK(TS_MOE_GEMV_PUSH)
#endif
