#include "cli/bench_commit.h"

#include <cstdio>
#include <filesystem>

#include "core/error.h"

#ifndef TOUCHSTONE_SOURCE_DIR
#define TOUCHSTONE_SOURCE_DIR ""
#endif
#ifndef TOUCHSTONE_CONFIGURE_COMMIT
#define TOUCHSTONE_CONFIGURE_COMMIT "unknown"
#endif
#ifndef TOUCHSTONE_CONFIGURE_DIRTY
#define TOUCHSTONE_CONFIGURE_DIRTY 0
#endif
#ifndef TOUCHSTONE_BUILD_TYPE
#define TOUCHSTONE_BUILD_TYPE ""
#endif

namespace ts::cli {

namespace {

// stdout of a shell command, trailing newline removed; nullopt when it fails.
std::optional<std::string> output_of(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  if (pclose(p) != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

CommitInfo current_commit(const std::optional<std::string>& source_dir) {
  const std::string dir = source_dir.value_or(TOUCHSTONE_SOURCE_DIR);
  if (source_dir) check(std::filesystem::is_directory(dir), "--source {}: not a directory", dir);
  CommitInfo c;
  c.meta.build_type = TOUCHSTONE_BUILD_TYPE;
  if (!dir.empty() && std::filesystem::is_directory(dir)) {
    const std::string git = "git -C " + quoted(dir);
    if (auto sha = output_of(git + " rev-parse HEAD 2>/dev/null"); sha && sha->size() == 40) {
      // Tracked files only: an untracked scratch file does not change what was built.
      const auto status = output_of(git + " status --porcelain --untracked-files=no 2>/dev/null");
      c.meta.commit = *sha;
      c.meta.dirty = !status || !status->empty();
      c.source = "git at run time in " + dir;
      return c;
    }
  }
  check(!source_dir, "--source {}: not a git work tree", dir);
  c.meta.commit = TOUCHSTONE_CONFIGURE_COMMIT;
  c.meta.dirty = TOUCHSTONE_CONFIGURE_DIRTY != 0;
  c.source = "baked in at configure time (no git tree at " + dir + ")";
  return c;
}

}  // namespace ts::cli
