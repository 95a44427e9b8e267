// The CLI on bad input: one line on stderr, exit 1, never a crash or a partial output file. Runs the
// real binary over the fuzz seed corpus (each file breaks one thing the reader checks).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include "tests/temp_path.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string err;
};

Result run_cli(const std::string& args) {
  const fs::path err_file = ts::test::temp_path("cli_test.err");
  const std::string cmd = std::string(TOUCHSTONE_CLI) + " " + args + " >/dev/null 2>" + err_file.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err_file);
  std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), err};
}

const fs::path kCorpus = fs::path(TOUCHSTONE_SOURCE_DIR) / "fuzz" / "corpus" / "safetensors";

TEST(Cli, MalformedCaseFilesGiveOneLineAndExit1) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    if (e.path().filename().string().rfind("valid_", 0) == 0) continue;  // valid_gemm, the NaN / Inf seeds
    const fs::path out = ts::test::temp_path("cli_test.out");
    fs::remove(out);
    const Result r = run_cli("run " + e.path().string() + " --backend reference --out " + out.string());
    EXPECT_EQ(r.exit_code, 1) << e.path();
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("touchstone: ", 0), 0u) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "partial output for " << e.path();
    ++n;
  }
  EXPECT_GE(n, 10);
}

TEST(Cli, ValidCaseRunsAndChecks) {
  const fs::path out = ts::test::temp_path("cli_test_valid.out");
  EXPECT_EQ(run_cli("run " + (kCorpus / "valid_gemm").string() + " --backend reference --out " + out.string()).exit_code, 0);
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(run_cli("check " + (kCorpus / "valid_gemm").string() + " --backend reference").exit_code, 0);
}

TEST(Cli, UnknownNamesAreErrors) {
  for (const char* args : {"bogus", "list --backend nope", "run x --backend reference", "list --wat",
                           "cases --op nope", "gen gemm nocase --out nocase.safetensors", "golden verify --op gemm",
                           "check " TOUCHSTONE_SOURCE_DIR "/fuzz/corpus/safetensors/valid_gemm --backend nope"}) {
    const Result r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

}  // namespace
