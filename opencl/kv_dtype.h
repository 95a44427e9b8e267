#pragma once
// The build option that makes kernels/kv.h's kv_t and KST a pool of `t` (the kv family's pools, whose
// dtype is not the activations').
#include "core/dtype.h"
#include "core/error.h"

namespace ts::ocl {

inline const char* kv_dtype_define(DType t) {
  switch (t) {
    case DType::F16: return "-DKV_F16";
    case DType::BF16: return "-DKV_BF16";
    case DType::I8: return "-DKV_I8";
    case DType::F8_E4M3: return "-DKV_F8";
    default: fail("OpenCL: no KV pool element type {}", dtype_name(t));
  }
}

}  // namespace ts::ocl
