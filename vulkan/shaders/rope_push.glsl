// The qk-norm / RoPE writer's push constants (rope.comp, planned by vulkan/dense/rope.cpp): one list, the shader's block and its C++ mirror both expanded from it (push.glsl,
// vulkan/runtime/push_block.h).
#define TS_ROPE_PUSH(U, F, A) \
  U(rows) U(heads) U(hd) U(half_rot) U(mode) F(eps) \
  U(so) U(s_tok) U(dof) U(d_head) U(d_tok) U(pos_offset) U(use_positions) \
  /* ragged batches and paged destinations */ \
  U(num_seqs) U(cache_len) U(block_size) U(width) \
  /* DEST_*, vLLM's key interleave x = 1 << x_shift (push constants: one pipeline) */ \
  U(dest) U(x_shift)

#ifdef __cplusplus
#include "vulkan/runtime/push_block.h"
TS_PUSH_STRUCT(RopePush, TS_ROPE_PUSH)
#else
#include "push.glsl"
TS_PUSH_BLOCK(TS_ROPE_PUSH)
#endif
