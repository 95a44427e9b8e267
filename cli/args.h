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

}  // namespace ts::cli
