// The one enumeration of op x case x dtype (core/case_list.h) against the names the rest of the tree
// already depends on: every golden file golden/MANIFEST lists is a ci-tier case of the enumeration at
// the path golden regen writes, the conformance binary registers exactly the enumeration's test names,
// and the forms of a case's name are pinned by example. And the coverage manifests (core/coverage.h):
// a backend that refuses one case it used to support shows a drop, which is what fails ci/gate.sh.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/case_list.h"
#include "core/coverage.h"
#include "core/rng.h"
#include "tests/run_cli.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CaseList, NamesOfOneCaseInEveryForm) {
  const Op& op = op_or_throw("flash_attention");
  const auto entries = op_cases(op);
  const auto it = std::find_if(entries.begin(), entries.end(),
                               [](const CaseEntry& e) { return e.case_name() == "chunked_prefill_gqa8_hd96" && e.dtype == DType::BF16; });
  ASSERT_NE(it, entries.end()) << "flash_attention has no case chunked_prefill_gqa8_hd96 in BF16";
  EXPECT_EQ(it->name(), "chunked_prefill_gqa8_hd96/BF16");
  EXPECT_EQ(it->key(), "flash_attention/chunked_prefill_gqa8_hd96/BF16");
  EXPECT_EQ(it->test_name("cpu"), "cpu/flash_attention.chunked_prefill_gqa8_hd96/BF16");
  EXPECT_EQ(it->file_stem(), "flash_attention__chunked_prefill_gqa8_hd96__BF16");
  EXPECT_EQ(it->golden_path(), "core/flash_attention__chunked_prefill_gqa8_hd96__BF16.safetensors");
  EXPECT_EQ(it->failure_stem("vulkan"), "vulkan__flash_attention__chunked_prefill_gqa8_hd96__BF16");
  EXPECT_EQ(it->bench_name("opencl"), "flash_attention/opencl/chunked_prefill_gqa8_hd96/BF16");
  EXPECT_EQ(op_of_file_stem(it->file_stem()), "flash_attention");
  // The seed every generated case (matrix, goldens, touchstone gen) is made from.
  EXPECT_EQ(it->seed(), stable_hash("flash_attention/chunked_prefill_gqa8_hd96/BF16"));
}

TEST(CaseList, FiltersByTierOpFamilyAndDtype) {
  const auto all = enumerate_cases();
  const auto ci = enumerate_cases({.max_tier = Tier::Ci});
  ASSERT_FALSE(ci.empty());
  EXPECT_LT(ci.size(), all.size());
  for (const CaseEntry& e : ci) EXPECT_LE(e.tier(), Tier::Ci) << e.key();
  for (const CaseEntry& e : enumerate_cases({.family = "moe"})) EXPECT_EQ(e.op->family(), "moe") << e.key();
  const auto bf16_gemm = enumerate_cases({.op = "gemm", .dtypes = {DType::BF16}});
  ASSERT_FALSE(bf16_gemm.empty());
  for (const CaseEntry& e : bf16_gemm) EXPECT_EQ(e.dtype, DType::BF16);
  std::set<std::string> keys;
  for (const CaseEntry& e : all) EXPECT_TRUE(keys.insert(e.key()).second) << "two cases named " << e.key();
  EXPECT_THROW(enumerate_cases({.op = "no_such_op"}), Error);
  EXPECT_THROW(enumerate_cases({.family = "no_such_family"}), Error);
}

// Every golden file is a ci-tier case at the path golden regen writes for it (a golden file whose
// name the enumeration does not make again would never be regenerated, and a known-failure or CI
// filter spelt from one would match nothing).
TEST(CaseList, GoldenManifestNamesAreEnumerated) {
  std::set<std::string> paths;
  for (const CaseEntry& e : enumerate_cases({.max_tier = Tier::Ci})) paths.insert(e.golden_path());
  std::istringstream manifest(slurp(fs::path(TOUCHSTONE_SOURCE_DIR) / "golden" / "MANIFEST"));
  std::string line;
  size_t listed = 0;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string sha, bytes, path;
    ASSERT_TRUE(static_cast<bool>(fields >> sha >> bytes >> path)) << line;
    EXPECT_TRUE(paths.count(path)) << path << " is in golden/MANIFEST but no ci-tier case of the enumeration";
    ++listed;
  }
  EXPECT_GT(listed, 100u);
}

// The conformance binary registers one test per enumerated case and backend, named as test_name() says,
// plus one /steps test at each case's first dtype.
TEST(CaseList, ConformanceRegistersTheEnumeratedNames) {
  const fs::path out = test::temp_path("case_list_conformance.txt");
  const std::string cmd = std::string(TOUCHSTONE_CONFORMANCE) +
                          " --backend=reference --tier=full --no-goldens --gtest_list_tests >" + out.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::set<std::string> listed;
  std::istringstream lines(slurp(out));
  std::string line, suite;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      suite = line;  // "reference/gemm."
    } else if (!suite.empty()) {
      const size_t start = line.find_first_not_of(' ');
      listed.insert(suite + line.substr(start, line.find(' ', start) - start));
    }
  }
  std::set<std::string> want;
  for (const CaseEntry& e : enumerate_cases()) {
    want.insert(e.test_name("reference"));
    if (e.dtype == e.spec->dtypes.front()) want.insert(e.test_name("reference") + "/steps");
  }
  ASSERT_FALSE(want.empty());
  std::vector<std::string> only_listed, only_wanted;
  std::set_difference(listed.begin(), listed.end(), want.begin(), want.end(), std::back_inserter(only_listed));
  std::set_difference(want.begin(), want.end(), listed.begin(), listed.end(), std::back_inserter(only_wanted));
  EXPECT_TRUE(only_listed.empty()) << only_listed.size() << " registered but not enumerated, e.g. " << only_listed.front();
  EXPECT_TRUE(only_wanted.empty()) << only_wanted.size() << " enumerated but not registered, e.g. " << only_wanted.front();
}

// A backend that refuses one case: the reference with one case taken away, as a regression in a
// backend's supports() (or a kernel registration lost) would take it.
class RefusesOne final : public Backend {
 public:
  RefusesOne(Backend& inner, std::string key) : inner_(inner), key_(std::move(key)) {
    for (const CaseEntry& e : enumerate_cases())
      if (e.key() == key_) refused_ = e;
  }
  std::string name() const override { return inner_.name(); }
  Availability availability() override { return inner_.availability(); }
  Support supports(const Problem& pr) override {
    if (refused_.op == pr.op && pr.dtype == refused_.dtype &&
        pr.op->to_map(pr.params) == refused_.op->to_map(refused_.spec->params))
      return Support::no("refused for this test");
    return inner_.supports(pr);
  }
  std::unique_ptr<Launch> prepare(const Problem& pr, TensorMap& io) override { return inner_.prepare(pr, io); }

 private:
  Backend& inner_;
  std::string key_;
  CaseEntry refused_;
};

TEST(Coverage, ARefusedCaseIsADrop) {
  Backend& ref = backend("reference");
  const std::string manifest = coverage_manifest(ref);
  const std::vector<std::string> listed = manifest_cases(manifest);
  ASSERT_EQ(listed, covered_cases(ref));
  ASSERT_FALSE(listed.empty());
  EXPECT_FALSE(compare_coverage(listed, covered_cases(ref)).dropped_any());

  const std::string key = "rms_norm/" + op_cases(op_or_throw("rms_norm")).front().name();
  RefusesOne refusing(ref, key);
  const CoverageDiff d = compare_coverage(listed, covered_cases(refusing));
  EXPECT_TRUE(d.dropped_any());
  EXPECT_EQ(d.dropped, std::vector<std::string>{key});
  EXPECT_TRUE(d.unknown.empty());

  // A listed name the catalog no longer has (a case renamed or removed) fails as well.
  std::vector<std::string> stale = listed;
  stale.push_back("rms_norm/no_such_case/F32");
  const CoverageDiff s = compare_coverage(stale, covered_cases(ref));
  EXPECT_TRUE(s.dropped_any());
  EXPECT_EQ(s.unknown, std::vector<std::string>{"rms_norm/no_such_case/F32"});
}

// The checked-in manifests are what their backends support now (reference and cpu here; opencl and
// vulkan in their own slices through ci/gate.sh).
TEST(Coverage, CheckedInManifestsHold) {
  for (const char* b : {"reference", "cpu"}) {
    if (!find_backend(b) || !backend(b).availability().ok) continue;
    const fs::path file = fs::path(TOUCHSTONE_SOURCE_DIR) / "ci" / "coverage" / (std::string(b) + ".txt");
    const CoverageDiff d = compare_coverage(manifest_cases(slurp(file)), covered_cases(backend(b)));
    EXPECT_TRUE(d.dropped.empty()) << b << " dropped " << d.dropped.size() << ", e.g. " << d.dropped.front();
    EXPECT_TRUE(d.unknown.empty()) << b << ": " << d.unknown.size() << " unknown, e.g. " << d.unknown.front();
  }
}

}  // namespace
}  // namespace ts
