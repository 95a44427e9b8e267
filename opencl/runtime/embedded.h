#pragma once
// The kernel sources of opencl/kernels, compiled into the library (opencl/embed.cmake).
#include <string_view>
#include <vector>

namespace ts::ocl {

struct EmbeddedFile {
  std::string_view name;  // "gemm.cl"
  std::string_view text;
};
const std::vector<EmbeddedFile>& embedded_kernels();

}  // namespace ts::ocl
