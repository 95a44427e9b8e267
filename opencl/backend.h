#pragma once
// The OpenCL backend: OpenCL C 1.2 kernels for real GPUs, proven on PoCL (a CPU driver).
// Device choice: TOUCHSTONE_OPENCL_DEVICE, an index into all devices of all platforms or a substring
// of a device's name; default the first device.
#include <memory>

#include "core/backend.h"

namespace ts {

struct OpenclBackend {
  static constexpr const char* kName = "opencl";
  static std::unique_ptr<Backend> create();
};

}  // namespace ts
