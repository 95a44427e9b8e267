#pragma once
// safetensors I/O: an 8-byte little-endian header length, a JSON header
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the data. The reader trusts nothing in the file: every length, offset and dtype is checked
// and a bad file is an Error, never a crash.
#include <functional>
#include <map>
#include <string>

#include "core/tensor.h"

namespace ts {

using Metadata = std::map<std::string, std::string>;

struct SafetensorsFile {
  Metadata metadata;
  TensorMap tensors;
};

SafetensorsFile parse_safetensors(std::string_view bytes);  // throws Error
SafetensorsFile read_safetensors(const std::string& path);
// The same checks of the whole file, but only the tensors `wanted` names are read into memory (one
// layer of a checkpoint shard of gigabytes); the metadata is read whole.
SafetensorsFile read_safetensors(const std::string& path, const std::function<bool(const std::string&)>& wanted);
std::string serialize_safetensors(const SafetensorsFile& f);
// Writes to a temporary file beside `path` and renames it, so a failure leaves no partial output.
void write_safetensors(const std::string& path, const SafetensorsFile& f);

}  // namespace ts
