// kv_append's arguments (kv_append.cl, planned by opencl/attention/kv_append.cpp): one list, expanded by both
// (args.h).
#include "args.h"
#ifndef TS_OPENCL_KV_APPEND_ARGS_H
#define TS_OPENCL_KV_APPEND_ARGS_H

#define TS_KV_APPEND_ARGS(I, F) I(cache_len_before) I(nkv) I(hd) I(block_size)

TS_ARGS_STRUCT(KvAppendArgs, TS_KV_APPEND_ARGS)

#endif
