// The engines' argument structs (args.h) as the device compiler lays them out, for the host to compare
// with its own (tests/opencl_args_test.cpp): probe_<Struct> writes, for each field in list order, its
// name (its FNV-1a hash), offset and size and the value it reads by that name, then the struct's size.
#include "attention_args.h"
#include "kv_append_args.h"
#include "moe_gemv_args.h"
#include "quant_gemv_args.h"
#include "rope_args.h"

#define TS_PROBE_FIELD(n)                                                            \
  {                                                                                  \
    uint h = 2166136261u;                                                            \
    for (__constant const char* c = #n; *c; ++c) h = (h ^ (uint)(uchar)*c) * 16777619u; \
    out[k++] = (int)h;                                                               \
  }                                                                                  \
  out[k++] = (int)((__constant const char*)&args->n - (__constant const char*)args);   \
  out[k++] = (int)sizeof(args->n);
#define TS_PROBE_I(n) TS_PROBE_FIELD(n) out[k++] = args->n;
#define TS_PROBE_F(n) TS_PROBE_FIELD(n) out[k++] = as_int(args->n);
#define TS_PROBE(Name, LIST)                                                 \
  __kernel void probe_##Name(__constant const Name* args, __global int* out) { \
    int k = 0;                                                               \
    LIST(TS_PROBE_I, TS_PROBE_F)                                             \
    out[k] = (int)sizeof(Name);                                              \
  }

TS_PROBE(AttnArgs, TS_ATTN_ARGS)
TS_PROBE(NormRopeArgs, TS_NORM_ROPE_ARGS)
TS_PROBE(MoeGemvArgs, TS_MOE_GEMV_ARGS)
TS_PROBE(KvAppendArgs, TS_KV_APPEND_ARGS)
TS_PROBE(QuantGemvArgs, TS_QUANT_GEMV_ARGS)
