#include "core/safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checked.h"
#include "core/error.h"
#include "core/memory_budget.h"

namespace ts {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

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

// One tensor as the header declares it; its bytes are data[begin, end).
struct Entry {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  Metadata metadata;
  std::vector<Entry> entries;
  uint64_t data_bytes = 0;  // the data section the entries tile exactly
};

uint64_t header_length(std::string_view first8) {
  const uint64_t n = read_u64_le(first8.data());
  check(n <= kMaxHeaderBytes, "header length {} is implausibly large", n);
  check(n >= 2, "header length {} is too short for a JSON object", n);
  return n;
}

// SAX events of a header, only to find a key given twice in one object (a parse error ends the pass
// quietly: the real parse reports it).
struct DuplicateKeyFinder {
  std::vector<std::set<std::string>> open;
  std::string repeated;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) { open.emplace_back(); return true; }
  bool end_object() { open.pop_back(); return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool key(std::string& k) {
    if (open.back().insert(k).second) return true;
    repeated = k;
    return false;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};

// The header as safetensors writes it: one JSON object, starting at its first byte, padded at the end
// with spaces only; no NUL byte (it would end the JSON for some readers), no key twice in an object.
json parse_json(std::string_view header) {
  if (const size_t nul = header.find('\0'); nul != std::string_view::npos)
    fail("header holds a NUL byte at offset {}", nul);
  check(header.front() == '{', "header does not start with '{{'");
  const size_t last = header.find_last_not_of(' ');
  check(last != std::string_view::npos && header[last] == '}',
        "header has bytes after its JSON object (only spaces may pad it)");
  // Duplicate keys: nlohmann keeps the last silently. A first SAX pass (linear, unlike nlohmann's
  // callback parser) keeps one set of keys per open object and stops at the first repeated key.
  DuplicateKeyFinder dup;
  json::sax_parse(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(last + 1), &dup);
  check(dup.repeated.empty(), "header has the key '{}' twice in one object", dup.repeated);
  try {
    return json::parse(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(last + 1));
  } catch (const json::exception& e) {
    fail("header is not valid JSON: {}", e.what());
  }
}

Header parse_header(std::string_view text) {
  const json h = parse_json(text);
  check(h.is_object(), "header is not a JSON object");
  Header out;
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
    for (auto k = v.begin(); k != v.end(); ++k)
      check(k.key() == "dtype" || k.key() == "shape" || k.key() == "data_offsets", "tensor '{}': unknown field '{}'",
            name, k.key());
    Entry e;
    e.name = name;
    const std::string dts = v["dtype"].get<std::string>();
    const auto dt = dtype_from_name(dts);
    check(dt.has_value(), "tensor '{}': unknown dtype '{}'", name, dts);
    e.dtype = *dt;
    for (const auto& d : v["shape"]) {
      const uint64_t dim = as_u64(d, fmt::format("tensor '{}': a dimension", name));
      check(dim <= (1ull << 40), "tensor '{}': dimension {} is too large", name, dim);
      e.shape.push_back(static_cast<int64_t>(dim));
    }
    e.begin = as_u64(v["data_offsets"][0], fmt::format("tensor '{}': begin", name));
    e.end = as_u64(v["data_offsets"][1], fmt::format("tensor '{}': end", name));
    check(e.begin <= e.end, "tensor '{}': data_offsets begin {} > end {}", name, e.begin, e.end);
    int64_t numel = 0;
    try {
      numel = shape_numel(e.shape);
    } catch (const Error& err) {
      fail("tensor '{}': {}", name, err.what());
    }
    const uint64_t want = static_cast<uint64_t>(numel) * dtype_size(e.dtype);  // numel <= 2^40
    check(e.end - e.begin == want, "tensor '{}': {} bytes stored but shape {} x {} needs {}", name, e.end - e.begin,
          shape_str(e.shape), dts, want);
    out.entries.push_back(std::move(e));
  }
  // The tensors tile the data section exactly: sorted by offset, each starts where the last ended.
  std::vector<const Entry*> order;
  for (const auto& e : out.entries) order.push_back(&e);
  std::sort(order.begin(), order.end(),
            [](const Entry* a, const Entry* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
  uint64_t at = 0;
  const Entry* prev = nullptr;
  for (const Entry* e : order) {
    check(e->begin >= at, "tensor '{}': data_offsets [{}, {}] overlap tensor '{}' (ends at {})", e->name, e->begin,
          e->end, prev ? prev->name : "", at);
    check(e->begin == at, "tensor '{}': data_offsets begin {} leaves {} unused bytes after offset {}", e->name,
          e->begin, e->begin - at, at);
    at = e->end;
    prev = e;
  }
  out.data_bytes = at;
  return out;
}

// Memory the tensors will take on the host (data and guard zones), weighed before any is allocated.
void check_tensors_fit(const Header& h) {
  uint64_t total = 0;
  for (const auto& e : h.entries) total = checked::add_u(total, tensor_footprint(e.dtype, e.shape), "the tensors");
  check_memory_budget(total, "the file's tensors");
}

SafetensorsFile build(Header h, std::string_view data) {
  check(data.size() >= h.data_bytes, "the data section is {} bytes, the tensors need {}", data.size(), h.data_bytes);
  check(data.size() == h.data_bytes, "{} bytes after the last tensor's data (the tensors must tile the data section)",
        data.size() - h.data_bytes);
  check_tensors_fit(h);
  SafetensorsFile out;
  out.metadata = std::move(h.metadata);
  for (auto& e : h.entries) {
    Tensor t(e.dtype, e.shape);
    if (e.end > e.begin) std::memcpy(t.data(), data.data() + e.begin, e.end - e.begin);
    out.tensors.emplace(std::move(e.name), std::move(t));
  }
  return out;
}

// Reads exactly n bytes, in chunks, so a short or lying stream costs what it holds, not what it claims.
void read_exact(std::istream& in, uint64_t n, std::string& into, const char* what) {
  constexpr uint64_t kChunk = 1u << 20;
  while (n > 0) {
    const uint64_t step = std::min(n, kChunk);
    const size_t at = into.size();
    into.resize(at + step);
    in.read(into.data() + at, static_cast<std::streamsize>(step));
    const auto got = static_cast<uint64_t>(in.gcount());
    check(got == step, "the file ends inside the {} ({} bytes short)", what, n - got);
    n -= step;
  }
}

}  // namespace

SafetensorsFile parse_safetensors(std::string_view bytes) {
  check(bytes.size() >= 8, "file too short for a safetensors header ({} bytes)", bytes.size());
  const uint64_t header_len = header_length(bytes.substr(0, 8));
  check(header_len <= bytes.size() - 8, "header length {} runs past the end of the file ({} bytes)", header_len,
        bytes.size());
  Header h = parse_header(bytes.substr(8, header_len));
  return build(std::move(h), bytes.substr(8 + header_len));
}

// The header's tensors, each read from its place in the file into its own memory. The caller has
// checked the file's size and the tensors' footprint.
static SafetensorsFile read_tensors(Header h, std::ifstream& in, uint64_t header_len) {
  SafetensorsFile out;
  out.metadata = std::move(h.metadata);
  for (auto& e : h.entries) {
    Tensor t(e.dtype, e.shape);
    in.seekg(static_cast<std::streamoff>(8 + header_len + e.begin));
    in.read(reinterpret_cast<char*>(t.data()), static_cast<std::streamsize>(e.end - e.begin));
    check(static_cast<uint64_t>(in.gcount()) == e.end - e.begin, "tensor '{}': the file ends inside its data", e.name);
    out.tensors.emplace(std::move(e.name), std::move(t));
  }
  return out;
}

// Opens a safetensors file and reads its header: the header's length first, then the header; the
// body is never read before its length is known. Leaves `in` at the data section.
static Header open_safetensors(const std::string& path, std::ifstream& in, uint64_t& header_len) {
  std::error_code ec;
  check(!fs::is_directory(path, ec), "is a directory, not a safetensors file");
  in.open(path, std::ios::binary);
  check(static_cast<bool>(in), "cannot open the file");
  std::string head;
  read_exact(in, 8, head, "8-byte header length");
  header_len = header_length(head);
  std::string text;
  read_exact(in, header_len, text, "header");
  return parse_header(text);
}

SafetensorsFile read_safetensors(const std::string& path) {
  try {
    std::ifstream in;
    uint64_t header_len = 0;
    Header h = open_safetensors(path, in, header_len);
    check_tensors_fit(h);
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
      // A regular file's size is known before its data is read: the same checks, then each tensor is
      // read straight into its own memory, with no buffer between (a 134 MB case loads in a third of
      // the time: the buffer's growth and copy were most of it).
      const uintmax_t size = fs::file_size(path, ec);
      check(!ec, "cannot read the file's size");
      const uint64_t want_size = 8 + header_len + h.data_bytes;
      check(size >= want_size, "the file ends inside the data section ({} bytes short)", want_size - size);
      check(size == want_size, "bytes after the last tensor's data (the tensors must tile the data section)");
      return read_tensors(std::move(h), in, header_len);
    }
    // Exactly the data the header declares: a stream longer than that is an error.
    std::string data;
    read_exact(in, h.data_bytes, data, "data section");
    check(in.peek() == std::char_traits<char>::eof(),
          "bytes after the last tensor's data (the tensors must tile the data section)");
    return build(std::move(h), data);
  } catch (const Error& e) {
    fail("{}: {}", path, e.what());
  }
}

SafetensorsFile read_safetensors(const std::string& path, const std::function<bool(const std::string&)>& wanted) {
  try {
    std::ifstream in;
    uint64_t header_len = 0;
    Header h = open_safetensors(path, in, header_len);
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    check(!ec, "cannot read the file's size");
    // The whole file is checked against the header as read_safetensors checks it; only the wanted
    // tensors are read (a checkpoint shard is gigabytes; one layer is what a case needs).
    const uint64_t want_size = 8 + header_len + h.data_bytes;
    check(size >= want_size, "the file ends inside the data section ({} bytes short)", want_size - size);
    check(size == want_size, "bytes after the last tensor's data (the tensors must tile the data section)");
    std::erase_if(h.entries, [&](const Entry& e) { return !wanted(e.name); });
    check_tensors_fit(h);
    return read_tensors(std::move(h), in, header_len);
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
  check(!path.empty(), "the output file name is empty");
  std::error_code ec;
  check(!fs::is_directory(path, ec), "cannot write '{}': it is a directory", path);
  const std::string bytes = serialize_safetensors(f);
  const std::string tmp = path + ".partial";
  // Every failure past this point removes the temporary file: no partial output is ever left.
  auto give_up = [&tmp](const std::string& msg) {
    std::error_code rm;
    if (!fs::is_directory(tmp, rm)) fs::remove(tmp, rm);  // only a file this call created
    throw Error(msg);
  };
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) give_up(fmt::format("cannot write '{}': cannot create '{}'", path, tmp));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) give_up(fmt::format("writing '{}' failed", path));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    give_up(fmt::format("cannot rename '{}' to '{}': {}", tmp, path, std::strerror(errno)));
}

}  // namespace ts
