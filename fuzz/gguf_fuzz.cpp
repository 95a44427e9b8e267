// Fuzz entry of the GGUF reader: any byte string must parse or raise ts::Error, never crash, hang,
// allocate without bound or read out of bounds. A file that parses is used as `touchstone gguf` uses
// it: every metadata value printed, every tensor's shape and kind asked for, and each small tensor of
// a block kind decoded by the reference from the bytes the reader located, so a size the reader gets
// wrong (against the format table) reads outside the input under ASan.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/gguf.h"
#include "core/quant/formats.h"

namespace {
constexpr int64_t kMaxValuesToDecode = 1 << 16;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const ts::gguf::Header h = ts::gguf::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    for (const auto& kv : h.metadata) (void)kv.value.str();
    for (const auto& t : h.tensors) {
      (void)t.shape();
      const ts::QuantKind kind = t.kind();  // an Error for the kinds touchstone does not implement
      const ts::quant::Format* f = ts::quant::format(kind);
      const int64_t n = t.n_rows() * t.n_cols();
      if (!f || n > kMaxValuesToDecode) continue;
      if (static_cast<uint64_t>(ts::quant::row_bytes(*f, t.n_cols()) * t.n_rows()) != t.bytes) abort();
      std::vector<float> out(static_cast<size_t>(n));
      f->dequantize_row(data + t.offset, out.data(), n);
    }
  } catch (const ts::Error&) {
  }
  return 0;
}
