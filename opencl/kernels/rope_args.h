// The qk-norm / RoPE writer's arguments (norm_rope in rope.cl, planned by opencl/dense/rope.cpp): one list,
// expanded by both (args.h).
#include "args.h"
#ifndef TS_OPENCL_ROPE_ARGS_H
#define TS_OPENCL_ROPE_ARGS_H

#define TS_NORM_ROPE_ARGS(I, F)                                                                     \
  /* where head vector (token t, head h) is read and written: off + t tok_stride + h head_stride */   \
  I(src_off) I(src_tok_stride) I(src_head_stride) I(dst_off) I(dst_tok_stride) I(dst_head_stride)    \
  /* positions[t] when use_positions, else pos_offset + t; mode 0 move, 1 norm then RoPE, 2 RoPE */  \
  I(use_positions) I(pos_offset) I(mode) I(hd) I(rotary_dim) F(eps)                                  \
  /* a paged destination (-DDST > 0): table row width, slots per block, vLLM's x */                  \
  I(table_width) I(block_size) I(kx)

TS_ARGS_STRUCT(NormRopeArgs, TS_NORM_ROPE_ARGS)

#endif
