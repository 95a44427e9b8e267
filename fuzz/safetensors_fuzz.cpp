// Fuzz entry: any byte string given to the case-file reader must parse or raise ts::Error, never
// crash, hang, allocate without bound or read out of bounds. Goes through the whole case path
// (header, tensors, op, parameters, every op's validation: shapes, index ranges, positions), and a
// case that passes validation and is small runs through the reference, so a validation gap that
// would let a kernel index outside a tensor shows up under ASan / UBSan.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/case_file.h"
#include "reference/kernels.h"

namespace {
// Small enough that the reference of any op finishes in milliseconds.
constexpr int64_t kMaxElementsForReference = 1 << 16;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file = ts::parse_safetensors(std::string_view(reinterpret_cast<const char*>(data), size));
    const ts::Case c = ts::case_from_file(file);
    int64_t elements = 0;
    for (const auto& [name, t] : c.tensors) elements += t.numel();
    if (elements <= kMaxElementsForReference) {
      ts::TensorMap io = ts::working_set(c);
      ts::ref::run(*c.op, c.params, io);
    }
  } catch (const ts::Error&) {
  }
  return 0;
}
