#pragma once
// A small argument reader for the CLI: positional words and --flag VALUE / --flag=VALUE pairs.
// Unknown flags are errors (a typo must not silently change what runs).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace ts::cli {

class Args {
 public:
  // `flags_with_value` and `switches` list what this command accepts.
  Args(const std::vector<std::string>& argv, std::set<std::string> flags_with_value, std::set<std::string> switches);
  const std::vector<std::string>& positional() const { return pos_; }
  std::optional<std::string> get(const std::string& flag) const;
  std::string require(const std::string& flag) const;
  bool has(const std::string& sw) const { return switches_.count(sw) > 0; }

 private:
  std::vector<std::string> pos_;
  std::map<std::string, std::string> values_;
  std::set<std::string> switches_;
};

// Applies --device for `backend`: sets TOUCHSTONE_<BACKEND>_DEVICE before the backend is created.
void apply_device_flag(const Args& a, const std::string& backend);

// The output file may not be the input file: not the same name, not the same file through a symbolic
// or hard link (it would replace the file it was computed from). An empty name or a directory is an
// error before any work is done.
void check_output_path(const std::string& out, const std::string& input);

}  // namespace ts::cli
