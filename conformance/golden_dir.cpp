#include "conformance/golden_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace ts {

std::string default_golden_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("TOUCHSTONE_GOLDEN_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "touchstone" / "golden";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
#ifdef TOUCHSTONE_SOURCE_GOLDEN_DIR
  return TOUCHSTONE_SOURCE_GOLDEN_DIR;
#else
  return {};
#endif
}

}  // namespace ts
