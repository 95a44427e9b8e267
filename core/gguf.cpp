#include "core/gguf.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <set>
#include <type_traits>

#include <fmt/format.h>

#include "core/checked.h"
#include "core/error.h"
#include "core/memory_budget.h"

namespace ts::gguf {

namespace {

constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
// Arrays of arrays exist (nested token lists); no writer nests deeper than this, and a bound keeps a
// hostile file of nested empty arrays from recursing without end.
constexpr int kMaxArrayDepth = 8;
// The fewest bytes a metadata entry (key length, type, a UINT8) and a tensor info (name length,
// n_dims, one dimension, type, offset) take: a count is refused when the bytes left cannot hold it.
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

// The bytes one value of type t takes at least (all of them for the fixed-size types).
uint64_t min_encoded_bytes(ValueType t) {
  switch (t) {
    case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
    case ValueType::UINT16: case ValueType::INT16: return 2;
    case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
    case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: case ValueType::STRING: return 8;
    case ValueType::ARRAY: return 4 + 8;
  }
  return 1;
}

// Reads the header front to back, from memory or from a stream. Every read is checked against the
// bytes the file has left first, so no length field can make it read, or allocate, past the end.
class Cursor {
 public:
  explicit Cursor(std::string_view mem) : mem_(mem), size_(mem.size()) {}
  Cursor(std::istream& in, uint64_t size) : in_(&in), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t size() const { return size_; }
  uint64_t left() const { return size_ - pos_; }

  void take(void* dst, uint64_t n, std::string_view what) {
    check(n <= left(), "the file ends inside {} (at byte {}: {} bytes needed, {} left)", what, pos_, n, left());
    if (in_) {
      in_->read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
      check(static_cast<uint64_t>(in_->gcount()) == n, "the file ends inside {} (at byte {})", what, pos_);
    } else if (n > 0) {
      std::memcpy(dst, mem_.data() + pos_, n);
    }
    pos_ += n;
  }
  // A little-endian unsigned integer of N bytes.
  template <class U> U uint(std::string_view what) {
    unsigned char b[sizeof(U)];
    take(b, sizeof(U), what);
    U v = 0;
    for (size_t i = sizeof(U); i-- > 0;) v = static_cast<U>((v << 8) | b[i]);
    return v;
  }

 private:
  std::string_view mem_;
  std::istream* in_ = nullptr;
  uint64_t size_ = 0, pos_ = 0;
};

class Parser {
 public:
  explicit Parser(Cursor& c) : c_(c) {}

  Header run() {
    Header h;
    h.file_size = c_.size();
    magic();
    h.version = version();
    const uint64_t n_tensors = c_.uint<uint64_t>("the tensor count");
    const uint64_t n_kv = c_.uint<uint64_t>("the metadata count");
    fits_count(n_kv, kMinKeyValueBytes, "metadata count", "entry");
    fits_count(n_tensors, kMinTensorInfoBytes, "tensor count", "tensor info");
    std::set<std::string, std::less<>> keys;
    for (uint64_t i = 0; i < n_kv; ++i) {
      KeyValue kv;
      kv.key = string("a metadata key");
      check(keys.insert(kv.key).second, "metadata key '{}' appears twice", printable(kv.key));
      const std::string what = fmt::format("metadata '{}'", printable(kv.key));
      kv.value = value(value_type(what), what, 0);
      if (kv.key == "general.alignment") h.alignment = alignment(kv.value);
      h.metadata.push_back(std::move(kv));
    }
    std::set<std::string, std::less<>> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
      h.tensors.push_back(tensor_info(h.alignment));
      check(names.insert(h.tensors.back().name).second, "tensor '{}' appears twice", printable(h.tensors.back().name));
    }
    // The data section starts at the next multiple of the alignment (alignment <= 2^31: no wrap).
    h.data_offset = (c_.pos() + h.alignment - 1) / h.alignment * h.alignment;
    place_tensors(h);
    return h;
  }

 private:
  void magic() {
    unsigned char m[4];
    c_.take(m, 4, "the magic");
    check(std::memcmp(m, "GGUF", 4) == 0, "not a GGUF file (magic {:02x} {:02x} {:02x} {:02x}, expected 'GGUF')", m[0],
          m[1], m[2], m[3]);
  }

  uint32_t version() {
    const uint32_t v = c_.uint<uint32_t>("the version");
    if (v == 2 || v == 3) return v;
    check(v != 1, "GGUF version 1 is not supported (only 2 and 3: version 1 had 32-bit counts)");
    const uint32_t swapped = __builtin_bswap32(v);
    check(swapped != 2 && swapped != 3, "GGUF version {} reads as a big-endian file: only little-endian is supported",
          swapped);
    fail("GGUF version {} is not supported (only 2 and 3)", v);
  }

  // `n` items of at least `min_bytes` each must fit in what is left of the file.
  void fits_count(uint64_t n, uint64_t min_bytes, std::string_view what, std::string_view item) {
    check(n <= c_.left() / min_bytes, "{} {} is more than the file can hold ({} bytes left, {} at least per {})",
          what, n, c_.left(), min_bytes, item);
  }

  // Memory the header takes, weighed against the budget as it grows (a file can hold millions of
  // small values, each larger in memory than on disk).
  void charge(uint64_t bytes) {
    used_ = checked::add_u(used_, bytes, "the GGUF header");
    check_memory_budget(used_, "the GGUF header");
  }

  std::string string(std::string_view what) {
    const uint64_t n = c_.uint<uint64_t>(what);
    check(n <= c_.left(), "{}: a string of {} bytes runs past the end of the file ({} bytes left)", what, n,
          c_.left());
    charge(n);
    std::string s(n, '\0');
    c_.take(s.data(), n, what);
    return s;
  }

  ValueType value_type(std::string_view what) {
    const uint32_t t = c_.uint<uint32_t>(what);
    check(t <= static_cast<uint32_t>(ValueType::FLOAT64), "{}: unknown value type {}", what, t);
    return static_cast<ValueType>(t);
  }

  Value value(ValueType t, const std::string& what, int depth) {
    charge(sizeof(Value));
    Value v;
    v.type = t;
    switch (t) {
      case ValueType::UINT8: v.v = uint64_t{c_.uint<uint8_t>(what)}; break;
      case ValueType::UINT16: v.v = uint64_t{c_.uint<uint16_t>(what)}; break;
      case ValueType::UINT32: v.v = uint64_t{c_.uint<uint32_t>(what)}; break;
      case ValueType::UINT64: v.v = c_.uint<uint64_t>(what); break;
      case ValueType::INT8: v.v = int64_t{static_cast<int8_t>(c_.uint<uint8_t>(what))}; break;
      case ValueType::INT16: v.v = int64_t{static_cast<int16_t>(c_.uint<uint16_t>(what))}; break;
      case ValueType::INT32: v.v = int64_t{static_cast<int32_t>(c_.uint<uint32_t>(what))}; break;
      case ValueType::INT64: v.v = static_cast<int64_t>(c_.uint<uint64_t>(what)); break;
      case ValueType::FLOAT32: v.v = double{std::bit_cast<float>(c_.uint<uint32_t>(what))}; break;
      case ValueType::FLOAT64: v.v = std::bit_cast<double>(c_.uint<uint64_t>(what)); break;
      case ValueType::BOOL: {
        const uint8_t b = c_.uint<uint8_t>(what);
        check(b <= 1, "{}: a BOOL holds {}, not 0 or 1", what, b);
        v.v = b == 1;
        break;
      }
      case ValueType::STRING: v.v = string(what); break;
      case ValueType::ARRAY: {
        check(depth < kMaxArrayDepth, "{}: arrays nested more than {} deep", what, kMaxArrayDepth);
        v.elem = value_type(what);
        const uint64_t n = c_.uint<uint64_t>(what);
        fits_count(n, min_encoded_bytes(v.elem), fmt::format("{}: array length", what), "element");
        std::vector<Value> items;
        items.reserve(n);
        for (uint64_t i = 0; i < n; ++i) items.push_back(value(v.elem, what, depth + 1));
        v.v = std::move(items);
        break;
      }
    }
    return v;
  }

  static uint64_t alignment(const Value& v) {
    check(v.type == ValueType::UINT32, "general.alignment is a {}, not a UINT32", value_type_name(v.type));
    const uint64_t a = std::get<uint64_t>(v.v);
    check(std::has_single_bit(a), "general.alignment {} is not a power of two", a);
    return a;
  }

  TensorInfo tensor_info(uint64_t alignment) {
    charge(sizeof(TensorInfo));
    TensorInfo t;
    t.name = string("a tensor name");
    const std::string what = fmt::format("tensor '{}'", printable(t.name));
    const uint32_t n_dims = c_.uint<uint32_t>(what);
    check(n_dims >= 1 && n_dims <= kMaxDims, "{}: {} dimensions (1 to {} are possible)", what, n_dims, kMaxDims);
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t ne = c_.uint<uint64_t>(what);
      check(ne <= static_cast<uint64_t>(INT64_MAX), "{}: dimension {} is {}, more than 2^63 - 1", what, d, ne);
      t.ne.push_back(static_cast<int64_t>(ne));
    }
    const uint32_t type = c_.uint<uint32_t>(what);
    t.type = type_info(type);
    check(t.type != nullptr, "{}: unknown ggml type id {}", what, type);
    t.offset = c_.uint<uint64_t>(what);
    int64_t numel = 0;
    try {
      numel = checked::numel(t.ne);
    } catch (const Error& e) {
      fail("{}: {}", what, e.what());
    }
    check(t.ne[0] % t.type->block_elems == 0, "{}: rows of {} values are not a whole number of {} blocks ({} values)",
          what, t.ne[0], t.type->name, t.type->block_elems);
    t.bytes = static_cast<uint64_t>(checked::mul(numel / t.type->block_elems, t.type->block_bytes, what.c_str()));
    check(t.offset % alignment == 0, "{}: offset {} is not a multiple of the alignment {}", what, t.offset, alignment);
    return t;
  }

  // Offsets become absolute; each tensor must lie inside the file, apart from every other.
  static void place_tensors(Header& h) {
    for (TensorInfo& t : h.tensors) {
      check(checked::fits_u(h.data_offset, t.offset, h.file_size) &&
                checked::fits_u(h.data_offset + t.offset, t.bytes, h.file_size),
            "tensor '{}': its {} bytes at offset {} of the data section (byte {}) run past the end of the file ({} "
            "bytes)",
            printable(t.name), t.bytes, t.offset, h.data_offset, h.file_size);
      t.offset += h.data_offset;
    }
    std::vector<const TensorInfo*> order;
    for (const TensorInfo& t : h.tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < order.size(); ++i)
      check(order[i]->offset >= order[i - 1]->offset + order[i - 1]->bytes,
            "tensor '{}' (bytes {} to {}) overlaps tensor '{}' (bytes {} to {})", printable(order[i]->name),
            order[i]->offset, order[i]->offset + order[i]->bytes, printable(order[i - 1]->name), order[i - 1]->offset,
            order[i - 1]->offset + order[i - 1]->bytes);
  }

  Cursor& c_;
  uint64_t used_ = 0;
};

}  // namespace

std::string printable(std::string_view s) {
  constexpr size_t kMax = 120;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += c < 0x20 || c == 0x7f ? fmt::format("\\x{:02x}", c) : std::string(1, s[i]);
  }
  return s.size() > kMax ? out + "..." : out;
}

int64_t TensorInfo::n_rows() const {
  int64_t n = 1;
  for (size_t i = 1; i < ne.size(); ++i) n *= ne[i];  // numel was checked when the file was read
  return n;
}

std::vector<int64_t> TensorInfo::shape() const { return {ne.rbegin(), ne.rend()}; }

QuantKind TensorInfo::kind() const {
  check(type->kind.has_value(), "tensor '{}' has type {}, which touchstone does not implement (implemented: {})",
        printable(name), type->name, enum_choices<QuantKind>());
  return *type->kind;
}

std::string Value::str(size_t max_items) const {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<Value>>) {
          std::string s = "[";
          for (size_t i = 0; i < x.size() && i < max_items; ++i) s += (i ? ", " : "") + x[i].str(max_items);
          if (x.size() > max_items) s += fmt::format(", ... ({} in all)", x.size());
          return s + "]";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else {
          return fmt::format("{}", x);
        }
      },
      v);
}

const Value* Header::find(std::string_view key) const {
  for (const KeyValue& kv : metadata)
    if (kv.key == key) return &kv.value;
  return nullptr;
}

const TensorInfo* Header::tensor(std::string_view name) const {
  for (const TensorInfo& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

Header parse(std::string_view bytes) {
  Cursor c(bytes);
  return Parser(c).run();
}

File::File(std::string path) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  try {
    std::error_code ec;
    // A pipe or /dev/zero has no size to bound the counts by: only regular files are read.
    if (!fs::is_regular_file(path_, ec)) fail("{}", fs::exists(path_, ec) ? "is not a regular file" : "no such file");
    const uint64_t size = fs::file_size(path_, ec);
    check(!ec, "cannot read its size: {}", ec.message());
    in_.open(path_, std::ios::binary);
    check(static_cast<bool>(in_), "cannot open the file");
    Cursor c(in_, size);
    header_ = Parser(c).run();
  } catch (const Error& e) {
    fail("{}: {}", path_, e.what());
  }
}

const TensorInfo& File::tensor(std::string_view name) const {
  const TensorInfo* t = header_.tensor(name);
  check(t != nullptr, "{}: no tensor '{}' in the file (it has {} tensors: touchstone gguf list shows them)", path_,
        printable(name), header_.tensors.size());
  return *t;
}

void File::read(const TensorInfo& t, void* dst) const {
  check_memory_budget(t.bytes, fmt::format("{}: tensor '{}'", path_, printable(t.name)));
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(t.offset));
  in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(t.bytes));
  check(in_ && static_cast<uint64_t>(in_.gcount()) == t.bytes, "{}: tensor '{}': cannot read its {} bytes at {}",
        path_, printable(t.name), t.bytes, t.offset);
}

std::vector<uint8_t> File::read(const TensorInfo& t) const {
  check_memory_budget(t.bytes, fmt::format("{}: tensor '{}'", path_, printable(t.name)));
  std::vector<uint8_t> out(t.bytes);
  read(t, out.data());
  return out;
}

}  // namespace ts::gguf
