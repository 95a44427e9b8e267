// Where the binaries look for the golden files when not told: the environment first, then an
// installed tree beside the executable (so an unpacked bundle finds its own), then the source tree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "conformance/golden_dir.h"
#include "tests/temp_path.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

TEST(GoldenDir, AnInstalledTreeIsFoundBesideTheExecutable) {
  const fs::path root = ts::test::temp_path("golden-dir");
  fs::create_directories(root / "bin");
  EXPECT_EQ(installed_golden_dir(root / "bin" / "touchstone-conformance"), "");  // no share/ yet
  fs::create_directories(root / "share" / "touchstone" / "golden");
  EXPECT_EQ(installed_golden_dir(root / "bin" / "touchstone-conformance"),
            (root / "share" / "touchstone" / "golden").string());
  fs::remove_all(root);
}

TEST(GoldenDir, TheEnvironmentWinsAndTheSourceTreeIsTheLastResort) {
  ASSERT_EQ(::setenv("TOUCHSTONE_GOLDEN_DIR", "/somewhere/golden", 1), 0);
  EXPECT_EQ(default_golden_dir(), "/somewhere/golden");
  ASSERT_EQ(::unsetenv("TOUCHSTONE_GOLDEN_DIR"), 0);
  // The test binary sits in the build tree (no share/ beside it): the source tree's golden/.
  EXPECT_EQ(fs::path(default_golden_dir()), fs::path(TOUCHSTONE_SOURCE_DIR) / "golden");
}

}  // namespace
}  // namespace ts
