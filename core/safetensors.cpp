#include "core/safetensors.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace ts {

namespace {

using json = nlohmann::json;

// Headers larger than this are refused before any allocation (real files' headers are kilobytes).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

uint64_t read_u64_le(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint64_t as_u64(const json& j, const std::string& what) {
  check(j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0),
        "{} must be a non-negative integer", what);
  return j.get<uint64_t>();
}

}  // namespace

SafetensorsFile parse_safetensors(std::string_view bytes) {
  check(bytes.size() >= 8, "file too short for a safetensors header ({} bytes)", bytes.size());
  const uint64_t header_len = read_u64_le(bytes.data());
  check(header_len <= kMaxHeaderBytes, "header length {} is implausibly large", header_len);
  check(header_len <= bytes.size() - 8, "header length {} runs past the end of the file ({} bytes)",
        header_len, bytes.size());
  const std::string_view header = bytes.substr(8, header_len);
  const std::string_view data = bytes.substr(8 + header_len);

  json h;
  try {
    h = json::parse(header.begin(), header.end());
  } catch (const json::exception& e) {
    fail("header is not valid JSON: {}", e.what());
  }
  check(h.is_object(), "header is not a JSON object");

  SafetensorsFile out;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      check(v.is_object(), "__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        check(m.value().is_string(), "metadata value '{}' is not a string", m.key());
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    check(v.is_object(), "tensor '{}': entry is not an object", name);
    check(v.contains("dtype") && v["dtype"].is_string(), "tensor '{}': missing dtype", name);
    check(v.contains("shape") && v["shape"].is_array(), "tensor '{}': missing shape", name);
    check(v.contains("data_offsets") && v["data_offsets"].is_array() && v["data_offsets"].size() == 2,
          "tensor '{}': data_offsets must be [begin, end]", name);
    const std::string dts = v["dtype"].get<std::string>();
    const auto dt = dtype_from_name(dts);
    check(dt.has_value(), "tensor '{}': unknown dtype '{}'", name, dts);
    Shape shape;
    for (const auto& d : v["shape"]) {
      const uint64_t dim = as_u64(d, fmt::format("tensor '{}': a dimension", name));
      check(dim <= (1ull << 40), "tensor '{}': dimension {} is too large", name, dim);
      shape.push_back(static_cast<int64_t>(dim));
    }
    const uint64_t begin = as_u64(v["data_offsets"][0], fmt::format("tensor '{}': begin", name));
    const uint64_t end = as_u64(v["data_offsets"][1], fmt::format("tensor '{}': end", name));
    check(begin <= end, "tensor '{}': data_offsets begin {} > end {}", name, begin, end);
    check(end <= data.size(), "tensor '{}': data_offsets end {} is past the end of the data ({} bytes)",
          name, end, data.size());
    int64_t numel = 0;
    try {
      numel = shape_numel(shape);
    } catch (const Error& e) {
      fail("tensor '{}': {}", name, e.what());
    }
    const uint64_t want = static_cast<uint64_t>(numel) * dtype_size(*dt);
    check(end - begin == want, "tensor '{}': {} bytes stored but shape {} x {} needs {}", name,
          end - begin, shape_str(shape), dts, want);
    Tensor t(*dt, shape);
    if (want) std::memcpy(t.data(), data.data() + begin, want);
    out.tensors.emplace(name, std::move(t));
  }
  return out;
}

SafetensorsFile read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(static_cast<bool>(in), "cannot open '{}'", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  try {
    return parse_safetensors(ss.str());
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

std::string serialize_safetensors(const SafetensorsFile& f) {
  json h = json::object();
  if (!f.metadata.empty()) h["__metadata__"] = f.metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : f.tensors) {  // std::map: sorted names, a stable layout
    h[name] = {{"dtype", std::string(dtype_name(t.dtype()))},
               {"shape", t.shape()},
               {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');  // align the data to 8 bytes
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += header;
  for (const auto& [name, t] : f.tensors) out.append(reinterpret_cast<const char*>(t.data()), t.nbytes());
  return out;
}

void write_safetensors(const std::string& path, const SafetensorsFile& f) {
  const std::string bytes = serialize_safetensors(f);
  const std::string tmp = path + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    check(static_cast<bool>(out), "cannot write '{}'", path);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      fail("writing '{}' failed", path);
    }
  }
  check(std::rename(tmp.c_str(), path.c_str()) == 0, "cannot rename '{}' to '{}'", tmp, path);
}

}  // namespace ts
