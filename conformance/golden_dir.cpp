#include "conformance/golden_dir.h"

#include <cstdlib>
#include <system_error>

namespace ts {

namespace fs = std::filesystem;

std::string installed_golden_dir(const fs::path& exe) {
  const fs::path dir = exe.parent_path().parent_path() / "share" / "touchstone" / "golden";
  std::error_code ec;
  return fs::is_directory(dir, ec) ? dir.string() : std::string();
}

std::string default_golden_dir() {
  if (const char* env = std::getenv("TOUCHSTONE_GOLDEN_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    if (std::string installed = installed_golden_dir(exe); !installed.empty()) return installed;
  }
#ifdef TOUCHSTONE_SOURCE_GOLDEN_DIR
  return TOUCHSTONE_SOURCE_GOLDEN_DIR;
#else
  return {};
#endif
}

}  // namespace ts
