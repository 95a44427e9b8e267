// kv_append.comp's push constants (planned by vulkan/attention/kv_append.cpp): one list, the shader's block and its C++
// mirror both expanded from it (push.glsl, vulkan/runtime/push_block.h).
#define TS_KV_APPEND_PUSH(U, F, A)                                              \
  /* rows: tokens x nkv per side */                                             \
  U(rows) U(nkv) U(hd) U(block_size) U(cache_len_before)                        \
  /* a KV_DTYPE_*, a push constant: one pipeline per dtype for every pool kind */ \
  U(kv_kind)

#ifdef __cplusplus
#include "vulkan/runtime/push_block.h"
TS_PUSH_STRUCT(KvAppendPush, TS_KV_APPEND_PUSH)
#else
#include "push.glsl"
TS_PUSH_BLOCK(TS_KV_APPEND_PUSH)
#endif
