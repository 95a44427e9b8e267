#pragma once
// GGUF (v2 and v3, little-endian) in: the header of a llama.cpp checkpoint (metadata and tensor
// infos) and, on demand, one tensor's bytes. The layout (ggml's gguf.cpp is the format's spec):
//   "GGUF", u32 version, u64 tensor count, u64 metadata count,
//   metadata: {string key, u32 value type, value} (strings are u64 length + bytes; an array is
//             u32 element type, u64 count, the elements, arrays of arrays included),
//   tensor infos: {string name, u32 n_dims, u64 ne[n_dims] (ne[0] innermost), u32 ggml type,
//                  u64 offset from the data section},
//   padding to `general.alignment` (default 32), the data section.
// Like the safetensors reader it trusts nothing: every count and length is bounded by the bytes the
// file has left before anything is allocated, shapes go through core/checked.h, and every tensor
// must be aligned, inside the file and apart from the others. A bad file is a one-line Error.
// A multi-GB checkpoint is never loaded whole: the header is read from the stream, a tensor's bytes
// when asked for.
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/kinds.h"

namespace ts::gguf {

enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
  STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
std::string_view value_type_name(ValueType t);

// One metadata value: unsigned integers as uint64_t, signed as int64_t, floats as double, and the
// exact type it had in the file (a UINT8 stays a UINT8 when written back).
struct Value {
  ValueType type = ValueType::UINT8;
  ValueType elem = ValueType::UINT8;  // ARRAY: the elements' type
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<Value>> v;

  // The value as text: numbers in decimal, strings as they are, arrays as "[a, b, ...]" (the first
  // `max_items` elements, then "... (N in all)").
  std::string str(size_t max_items = 8) const;
  friend bool operator==(const Value&, const Value&) = default;
};

struct KeyValue {
  std::string key;
  Value value;
};

// A ggml tensor type: its id, ggml's name, block size in values and bytes, and the touchstone kind
// it maps to (none for the types touchstone does not implement: Q3_K, IQ*, ...).
struct TypeInfo {
  uint32_t id;
  std::string_view name;
  int64_t block_elems, block_bytes;
  std::optional<QuantKind> kind;
};
const TypeInfo* type_info(uint32_t ggml_type);  // nullptr for an id ggml does not define

struct TensorInfo {
  std::string name;
  std::vector<int64_t> ne;  // GGUF order: ne[0] is the row length
  const TypeInfo* type = nullptr;
  uint64_t offset = 0;  // absolute, in the file
  uint64_t bytes = 0;
  int64_t n_cols() const { return ne[0]; }
  int64_t n_rows() const;                   // the product of ne[1..]
  std::vector<int64_t> shape() const;       // ne reversed: [.., n_rows, n_cols], as touchstone writes shapes
  // The touchstone kind, or an Error "tensor 'X' has type Q3_K, which touchstone does not implement".
  QuantKind kind() const;
};

struct Header {
  uint32_t version = 3;
  uint64_t alignment = 32;  // general.alignment, or GGUF's default of 32
  uint64_t data_offset = 0;  // where the data section starts in the file
  uint64_t file_size = 0;
  std::vector<KeyValue> metadata;  // in file order
  std::vector<TensorInfo> tensors;  // in file order

  const Value* find(std::string_view key) const;
  const TensorInfo* tensor(std::string_view name) const;
};

// A name or key from a file as messages and listings show it: control bytes as \xNN (an error stays
// one line whatever the file holds), at most 120 bytes, then "...".
std::string printable(std::string_view s);

// The header of a whole file held in memory (tests, the fuzzer). Errors do not name a file.
Header parse(std::string_view bytes);

// A GGUF file on disk: the header is read when it is opened, tensor bytes when asked for. Every
// error names the file.
class File {
 public:
  explicit File(std::string path);
  const std::string& path() const { return path_; }
  const Header& header() const { return header_; }
  // The tensor named `name`, or an Error saying the file has no such tensor (and how many it has).
  const TensorInfo& tensor(std::string_view name) const;
  // Reads t.bytes bytes of `t` into dst.
  void read(const TensorInfo& t, void* dst) const;
  std::vector<uint8_t> read(const TensorInfo& t) const;

 private:
  std::string path_;
  mutable std::ifstream in_;
  Header header_;
};

}  // namespace ts::gguf
