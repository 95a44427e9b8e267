#pragma once
// The scalar reference of every op: plain loops in double, written to be read. Compiled without
// fast-math and without FMA contraction, so every machine produces the same bits (the goldens).
// The exception: the GGUF block formats (quant_blocks.cpp) compute in float, in ggml's order, since
// ggml's float code is their definition.
#include "core/ops/all_params.h"
#include "core/tensor.h"

namespace ts::ref {

#define X(name, P) void name(const P& p, TensorMap& t);
#include "core/ops/all_ops.inc"
#undef X

}  // namespace ts::ref
