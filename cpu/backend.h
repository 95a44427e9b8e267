#pragma once
// The optimized CPU backend: SIMD with runtime dispatch, threads, OpenBLAS where it wins.
#include "core/backend.h"

namespace ts {

struct CpuBackend {
  static constexpr const char* kName = "cpu";
  static std::unique_ptr<Backend> create();
};

}  // namespace ts
