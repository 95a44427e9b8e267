// Fuzz entry: any byte string given to the case-file reader must parse or raise ts::Error, never
// crash, hang or read out of bounds. Goes through the whole case path (header, tensors, op,
// parameters, shapes, index ranges), not only the safetensors layer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/case_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file = ts::parse_safetensors(std::string_view(reinterpret_cast<const char*>(data), size));
    (void)ts::case_from_file(file);
  } catch (const ts::Error&) {
  }
  return 0;
}
