#pragma once
// The collective family on OpenCL (opencl/collective.cpp): no kernel, the rank's buffers staged
// through host memory around the process's world's collective.
#include <memory>

#include "core/backend.h"
#include "opencl/runtime/runtime.h"

namespace ts::ocl {

Support collective_support(const Problem& pr);
std::unique_ptr<Launch> prepare_collective(Runtime& rt, const Problem& pr, TensorMap& io);

}  // namespace ts::ocl
