// The expert GEMV's arguments (moe_gemv in moe_gemv.cl, planned by opencl/moe/moe_experts.cpp): one list,
// expanded by both (args.h).
#include "args.h"
#ifndef TS_OPENCL_MOE_GEMV_ARGS_H
#define TS_OPENCL_MOE_GEMV_ARGS_H

#define TS_MOE_GEMV_ARGS(I, F)                                                                      \
  /* each expert's rows n, the row length k */                                                       \
  I(n) I(k)                                                                                           \
  /* the pair view: expert ids[ids_off + p], activation a[a_off + (p / top_k) outer + (p % top_k) inner] */ \
  I(ids_off) I(a_off) I(top_k) I(outer) I(inner)                                                      \
  /* row blocks per work-group */                                                                    \
  I(rb_count)

TS_ARGS_STRUCT(MoeGemvArgs, TS_MOE_GEMV_ARGS)

#endif
