#pragma once
// Which commit a record measures: git's answer for the source tree at run time when that tree is
// there, else the commit baked in when the build was configured (an installed tree).
#include <optional>
#include <string>

#include "cli/bench_record.h"

namespace ts::cli {

struct CommitInfo {
  RecordMeta meta;
  std::string source;  // how it was found, for the user: "git at run time in DIR" or "configure time"
};

// `source_dir`: the tree the benchmark binary was built from (default: this CLI's own source tree).
CommitInfo current_commit(const std::optional<std::string>& source_dir);

}  // namespace ts::cli
