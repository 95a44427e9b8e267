// The CLI on hostile input: each case exits 1 with one line on stderr and leaves no output
// file (nor OUT.partial); the input case file is never replaced.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/safetensors.h"
#include "tests/temp_path.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string err;
};

fs::path scratch() {
  const fs::path d = ts::test::temp_path("cli_hostile");
  fs::create_directories(d);
  return d;
}

Result run_cli(const std::string& args, const std::string& env = "") {
  const fs::path err_file = scratch() / "stderr";
  const std::string cmd = env + " " + std::string(TOUCHSTONE_CLI) + " " + args + " >/dev/null 2>" + err_file.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err_file);
  std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), err};
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {(std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()};
}

void expect_one_line_exit_1(const Result& r, const std::string& needle, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1) << what;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  EXPECT_EQ(r.err.rfind("touchstone: ", 0), 0u) << what << ": " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << what << ": " << r.err;
}

const fs::path kValid = fs::path(TOUCHSTONE_SOURCE_DIR) / "fuzz" / "corpus" / "safetensors" / "valid_gemm";

TEST(CliHostile, OutputThatIsTheInputIsRefused) {
  const fs::path dir = scratch() / "same";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path in = dir / "case.safetensors";
  fs::copy_file(kValid, in);
  const std::string before = slurp(in);
  fs::create_symlink(in, dir / "link.safetensors");
  fs::create_hard_link(in, dir / "hard.safetensors");
  for (const std::string& out : std::vector<std::string>{in.string(), (dir / "." / "case.safetensors").string(), (dir / "link.safetensors").string(),
                                (dir / "hard.safetensors").string()}) {
    expect_one_line_exit_1(run_cli("run " + in.string() + " --backend reference --out " + out),
                           "is the input case file", out);
    EXPECT_EQ(slurp(in), before) << "the input was replaced through " << out;
    EXPECT_FALSE(fs::exists(out + ".partial")) << out;
  }
  // The input named through the link, the output by its own name: the same file all the same.
  expect_one_line_exit_1(run_cli("run " + (dir / "link.safetensors").string() + " --backend reference --out " + in.string()),
                         "is the input case file", "link as input");
  EXPECT_EQ(slurp(in), before);
  fs::remove_all(dir);
}

TEST(CliHostile, OutputThatIsADirectoryOrEmpty) {
  const fs::path dir = scratch() / "outdir";
  fs::remove_all(dir);
  fs::create_directories(dir);
  expect_one_line_exit_1(run_cli("run " + kValid.string() + " --backend reference --out " + dir.string()),
                         "is a directory", "run --out DIR");
  EXPECT_FALSE(fs::exists(dir.string() + ".partial"));
  expect_one_line_exit_1(run_cli("run " + kValid.string() + " --backend reference --out ''"), "--out is empty", "run --out ''");
  expect_one_line_exit_1(run_cli("gen gemm " + std::string("m1_n1_k1") + " --out " + dir.string()), "", "gen --out DIR");
  EXPECT_FALSE(fs::exists(dir.string() + ".partial"));
  expect_one_line_exit_1(run_cli("gen gemm m1_n1_k1 --out ''"), "", "gen --out ''");
  const fs::path missing = dir / "no" / "such" / "out.safetensors";
  expect_one_line_exit_1(run_cli("run " + kValid.string() + " --backend reference --out " + missing.string()), "cannot write",
                         "run --out in a missing directory");
  EXPECT_FALSE(fs::exists(missing.string() + ".partial"));
  fs::remove_all(dir);
}

TEST(CliHostile, EndlessStreamIsNotSlurped) {
  const fs::path out = scratch() / "zero.out";
  fs::remove(out);
  expect_one_line_exit_1(run_cli("run /dev/zero --backend reference --out " + out.string()), "header length 0", "/dev/zero");
  EXPECT_FALSE(fs::exists(out));
  expect_one_line_exit_1(run_cli("check /dev/zero --backend reference"), "header length 0", "check /dev/zero");
}

TEST(CliHostile, CaseOverTheMemoryBudget) {
  // gemm m = n = 65536, k = 1: 512 KiB of inputs, a 16 GiB output.
  ts::SafetensorsFile f;
  f.metadata = {{"op", "gemm"}, {"m", "65536"}, {"n", "65536"}, {"k", "1"}};
  f.tensors.emplace("a", ts::Tensor(ts::DType::F32, {65536, 1}));
  f.tensors.emplace("b", ts::Tensor(ts::DType::F32, {65536, 1}));
  const fs::path in = scratch() / "gemm_16g.safetensors", out = scratch() / "gemm_16g.out";
  ts::write_safetensors(in.string(), f);
  fs::remove(out);
  // (With the default, a quarter of physical memory, a machine of 64 GiB or more would run it.)
  expect_one_line_exit_1(run_cli("run " + in.string() + " --backend reference --out " + out.string(), "TOUCHSTONE_MEMORY_BUDGET=1G"),
                         "more than the memory budget of 1073741824 bytes", "gemm 16 GiB");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  expect_one_line_exit_1(run_cli("run " + in.string() + " --backend reference --out " + out.string(), "TOUCHSTONE_MEMORY_BUDGET=lots"),
                         "TOUCHSTONE_MEMORY_BUDGET 'lots' is not a byte count", "bad budget");
  fs::remove(in);
}

}  // namespace
