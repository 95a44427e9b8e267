#pragma once
// Paths in a temp directory that belongs to this test process alone, removed when it exits: two test
// runs on one machine (two build trees, a developer's run beside CI's) would otherwise write, read and
// delete each other's files under the same fixed names, and every run would leave its files behind.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace ts::test {

class ProcessTempDir {
 public:
  ProcessTempDir() : dir_(std::filesystem::temp_directory_path() / ("touchstone-test." + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~ProcessTempDir() {
    std::error_code ignored;  // nothing to do about a failure at exit
    std::filesystem::remove_all(dir_, ignored);
  }
  ProcessTempDir(const ProcessTempDir&) = delete;
  ProcessTempDir& operator=(const ProcessTempDir&) = delete;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

inline std::filesystem::path temp_path(const std::string& name) {
  static const ProcessTempDir d;
  return d.dir() / name;
}

}  // namespace ts::test
