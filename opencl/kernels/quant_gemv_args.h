// The quant GEMV's arguments (gemv_quant in gemv_quant.cl, planned by opencl/quant/quant_gemm.cpp): one list,
// expanded by both (args.h).
#include "args.h"
#ifndef TS_OPENCL_QUANT_GEMV_ARGS_H
#define TS_OPENCL_QUANT_GEMV_ARGS_H

// out[i * ldo + ocol0 + row] for the weight's n rows of k values.
#define TS_QUANT_GEMV_ARGS(I, F) I(n) I(k) I(ldo) I(ocol0)

TS_ARGS_STRUCT(QuantGemvArgs, TS_QUANT_GEMV_ARGS)

#endif
