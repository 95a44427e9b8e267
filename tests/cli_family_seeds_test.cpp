// The hostile per-family seeds of the case-file corpus (fuzz/make_hostile_op_seeds.py), and its other
// hostile files, through every backend's `touchstone check`: each family that registers ops has one op's case with a parameter at
// 2^31, 2^32 and 2^63 - 1, which every backend refuses with one line on stderr and exit 1, and one
// valid case with NaN and +-Inf in every float input, which every backend passes against the
// reference (the special values' semantics are the catalog's, the same on every backend). Never a
// signal, never a second line.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/op.h"
#include "tests/available_backend.h"
#include "tests/temp_path.h"

namespace fs = std::filesystem;

namespace ts {
namespace {

const fs::path kCorpus = fs::path(TOUCHSTONE_SOURCE_DIR) / "fuzz" / "corpus" / "safetensors";

struct Result {
  int exit_code;  // 128 + the signal when one ended it
  std::string err;
};

Result check(const fs::path& seed, const std::string& backend) {
  const fs::path err_file = test::temp_path("cli_family_seeds.err");
  const std::string cmd = std::string(TOUCHSTONE_CLI) + " check " + seed.string() + " --backend " + backend +
                          " >/dev/null 2>" + err_file.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err_file);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
          std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
}

// The corpus's seeds whose file names start with `prefix`.
std::vector<fs::path> seeds(const std::string& prefix) {
  std::vector<fs::path> r;
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.path().filename().string().rfind(prefix, 0) == 0) r.push_back(e.path());
  std::sort(r.begin(), r.end());
  return r;
}

TEST(FamilySeeds, EveryFamilyHasItsHostileAndSpecialValueSeeds) {
  std::set<std::string> families;
  for (const Op* op : all_ops()) families.insert(op->family());
  for (const std::string& f : families) {
    for (const char* v : {"_2p31", "_2p32", "_2p63m1"}) {
      int n = 0;
      for (const fs::path& p : seeds("hostile_" + f + "_")) n += p.filename().string().ends_with(v);
      EXPECT_EQ(n, 1) << "family " << f << ": no hostile seed with a parameter at " << v
                      << " (fuzz/make_hostile_op_seeds.py)";
    }
    EXPECT_EQ(seeds("valid_nan_inf_" + f + "_").size(), 1u) << "family " << f << ": no NaN / Inf seed";
  }
}

class FamilySeedsOn : public ::testing::TestWithParam<std::string> {};

// The family seeds and every other hostile file of the corpus (malformed headers, wrapped offsets,
// huge dimensions): the backend named changes nothing, each is refused before any kernel runs.
TEST_P(FamilySeedsOn, HostileFilesGiveOneLineAndExit1) {
  if (!test::available_backend(GetParam())) GTEST_SKIP() << GetParam() << " unavailable here";
  std::vector<fs::path> all;
  for (const fs::path& p : seeds(""))
    if (p.filename().string().rfind("valid_", 0) != 0) all.push_back(p);
  ASSERT_GE(seeds("hostile_").size(), 18u);
  for (const fs::path& p : all) {
    const Result r = check(p, GetParam());
    EXPECT_EQ(r.exit_code, 1) << GetParam() << " " << p.filename() << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << GetParam() << " " << p.filename() << ": " << r.err;
  }
}

TEST_P(FamilySeedsOn, NaNAndInfDataPass) {
  if (!test::available_backend(GetParam())) GTEST_SKIP() << GetParam() << " unavailable here";
  const std::vector<fs::path> all = seeds("valid_nan_inf_");
  ASSERT_FALSE(all.empty());
  for (const fs::path& p : all) {
    const Result r = check(p, GetParam());
    EXPECT_EQ(r.exit_code, 0) << GetParam() << " " << p.filename() << ": " << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, FamilySeedsOn, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
