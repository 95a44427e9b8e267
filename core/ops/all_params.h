#pragma once
// Every family's parameter structs: what core/ops/all_ops.inc's X(op_name, ParamStruct) lines name
// (the kv family's structs live beside the paged family's, in paged_params.h).
#include "core/ops/core_params.h"
#include "core/ops/quant_params.h"
#include "core/ops/moe_params.h"
#include "core/ops/paged_params.h"
#include "core/ops/tensor_params.h"
#include "core/ops/collective_params.h"
