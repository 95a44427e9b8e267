#pragma once
// Runs the touchstone binary (TOUCHSTONE_CLI) with `args` through the shell and returns its exit code,
// stdout and stderr, for the CLI tests.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <unistd.h>
#include "tests/temp_path.h"

namespace ts::test {

struct CliResult {
  int exit_code;
  std::string out, err;
};

inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  namespace fs = std::filesystem;
  const fs::path dir = ts::test::temp_path("run_cli");
  fs::create_directories(dir);
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const std::string cmd =
      env + " " + std::string(TOUCHSTONE_CLI) + " " + args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  const auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out), slurp(err)};
}

}  // namespace ts::test
