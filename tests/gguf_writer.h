#pragma once
// A small GGUF writer for the reader's tests (not part of the product): writes v2 and v3 files with any
// metadata, any alignment and any tensors, laid out as ggml lays them out (each tensor's data at the
// next multiple of the alignment). Hostile files start from its output and break one field.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/gguf.h"

namespace ts::test {

inline gguf::Value gv(gguf::ValueType t, uint64_t u) { return {t, gguf::ValueType::UINT8, u}; }
inline gguf::Value gv_int(gguf::ValueType t, int64_t i) { return {t, gguf::ValueType::UINT8, i}; }
inline gguf::Value gv_float(gguf::ValueType t, double f) { return {t, gguf::ValueType::UINT8, f}; }
inline gguf::Value gv_bool(bool b) { return {gguf::ValueType::BOOL, gguf::ValueType::UINT8, b}; }
inline gguf::Value gv_str(std::string s) { return {gguf::ValueType::STRING, gguf::ValueType::UINT8, std::move(s)}; }
inline gguf::Value gv_array(gguf::ValueType elem, std::vector<gguf::Value> items) {
  return {gguf::ValueType::ARRAY, elem, std::move(items)};
}

class GgufWriter {
 public:
  struct TensorSpec {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type;
    std::string data;
    // Relative to the data section; by default the next aligned place. A tensor given an offset is a
    // hostile one: its data is not written (the offset may lie anywhere).
    std::optional<uint64_t> offset;
  };

  uint32_t version = 3;
  uint64_t alignment = 32;  // the layout's; add general.alignment to the metadata to declare another
  std::vector<gguf::KeyValue> metadata;
  std::vector<TensorSpec> tensors;

  void kv(std::string key, gguf::Value v) { metadata.push_back({std::move(key), std::move(v)}); }
  void tensor(std::string name, std::vector<int64_t> ne, uint32_t type, std::string data,
              std::optional<uint64_t> offset = std::nullopt) {
    tensors.push_back({std::move(name), std::move(ne), type, std::move(data), offset});
  }

  std::string bytes() const {
    std::string out = "GGUF";
    put(out, version);
    put(out, uint64_t{tensors.size()});
    put(out, uint64_t{metadata.size()});
    for (const auto& kv : metadata) {
      put_string(out, kv.key);
      put(out, static_cast<uint32_t>(kv.value.type));
      put_value(out, kv.value);
    }
    std::vector<uint64_t> offsets;
    uint64_t at = 0;
    for (const auto& t : tensors) {
      at = align(at);
      offsets.push_back(t.offset.value_or(at));
      at += t.data.size();
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
      const auto& t = tensors[i];
      put_string(out, t.name);
      put(out, static_cast<uint32_t>(t.ne.size()));
      for (int64_t d : t.ne) put(out, static_cast<uint64_t>(d));
      put(out, t.type);
      put(out, offsets[i]);
    }
    out.resize(align(out.size()), '\0');
    const size_t data_start = out.size();
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].offset) continue;  // a hostile offset: its data is not written
      const size_t at_data = data_start + offsets[i];
      if (out.size() < at_data + tensors[i].data.size()) out.resize(at_data + tensors[i].data.size(), '\0');
      std::memcpy(out.data() + at_data, tensors[i].data.data(), tensors[i].data.size());
    }
    return out;
  }

  // Where the tensor count, metadata count and first metadata key's length are, to break them.
  static constexpr size_t kTensorCountAt = 8, kMetadataCountAt = 16, kFirstKeyLengthAt = 24;

  template <class T> static void put(std::string& out, T v) {
    for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  }
  template <class T> static void poke(std::string& out, size_t at, T v) {
    std::string b;
    put(b, v);
    out.replace(at, sizeof(T), b);
  }

 private:
  uint64_t align(uint64_t n) const { return (n + alignment - 1) / alignment * alignment; }

  static void put_string(std::string& out, const std::string& s) {
    put(out, uint64_t{s.size()});
    out += s;
  }
  static void put_value(std::string& out, const gguf::Value& v) {
    using VT = gguf::ValueType;
    switch (v.type) {
      case VT::UINT8: put(out, static_cast<uint8_t>(std::get<uint64_t>(v.v))); break;
      case VT::UINT16: put(out, static_cast<uint16_t>(std::get<uint64_t>(v.v))); break;
      case VT::UINT32: put(out, static_cast<uint32_t>(std::get<uint64_t>(v.v))); break;
      case VT::UINT64: put(out, std::get<uint64_t>(v.v)); break;
      case VT::INT8: put(out, static_cast<uint8_t>(std::get<int64_t>(v.v))); break;
      case VT::INT16: put(out, static_cast<uint16_t>(std::get<int64_t>(v.v))); break;
      case VT::INT32: put(out, static_cast<uint32_t>(std::get<int64_t>(v.v))); break;
      case VT::INT64: put(out, static_cast<uint64_t>(std::get<int64_t>(v.v))); break;
      case VT::FLOAT32: {
        const float f = static_cast<float>(std::get<double>(v.v));
        uint32_t u;
        std::memcpy(&u, &f, 4);
        put(out, u);
        break;
      }
      case VT::FLOAT64: {
        uint64_t u;
        const double d = std::get<double>(v.v);
        std::memcpy(&u, &d, 8);
        put(out, u);
        break;
      }
      case VT::BOOL:  // a hostile test may store any byte (a uint64_t) as a BOOL
        put(out, static_cast<uint8_t>(std::holds_alternative<bool>(v.v) ? std::get<bool>(v.v) : std::get<uint64_t>(v.v)));
        break;
      case VT::STRING: put_string(out, std::get<std::string>(v.v)); break;
      case VT::ARRAY: {
        const auto& items = std::get<std::vector<gguf::Value>>(v.v);
        put(out, static_cast<uint32_t>(v.elem));
        put(out, uint64_t{items.size()});
        for (const auto& i : items) put_value(out, i);
        break;
      }
    }
  }
};

}  // namespace ts::test
