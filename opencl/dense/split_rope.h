#pragma once
// The qk-norm / RoPE kernel (kernels/rope.cl) as the rope family's planners and the paged split ops
// use it: head vectors read from one view and written, normalised and rotated, to another.
#include <cstdint>
#include <string>

#include "core/kinds.h"
#include "core/ops/core_params.h"
#include "opencl/plan.h"

namespace ts::ocl {

// A paged pool as a destination: token t goes to position pos[t] of sequence seq[t] through `tables`
// as `dest` (core/kinds.h's PoolDest, rope.cl's -DDST: ferrum, vLLM key or vLLM value). The View's
// tok_stride is then the distance between blocks, its head_stride that between kv heads within a block.
struct PagedDst {
  PoolDest dest;
  cl_mem pos, seq;
  std::string tables;
  int64_t table_width, block_size, x;
};

// Where head vectors are read from or written to: element (token t, head h) starts at
// off + t * tok_stride + h * head_stride of tensor `name` (or, with `paged`, in a pool).
struct View {
  std::string name;
  int64_t off, tok_stride, head_stride;
  const PagedDst* paged = nullptr;
};

// qkv [tokens, (qh + 2 kvh) * hd] from element qkv_off: q to `q_dst`, k and v to `k_dst`, `v_dst`;
// RoPE positions `positions[t]` (a U32 buffer), or pos_offset + t when null.
void split_norm_rope(Planner& pl, const SplitQkvNormRopeParams& p, int64_t qkv_off, const View& q_dst,
                     const View& k_dst, const View& v_dst, cl_mem positions = nullptr);

}  // namespace ts::ocl
