// The conformance matrix: every backend x op x case x dtype, plus every backend x golden file,
// registered as GoogleTest tests named so that the name is the repro filter:
//   <backend>/<op>.<case>/<dtype>          e.g.  cpu/flash_attention.chunked_prefill_gqa8_hd96/BF16
//   <backend>/<op>.<case>/<dtype>/steps    one launch run on several steps of new values (steps.cpp)
//   <backend>/golden.<file stem>
// Flags (before GoogleTest's own): --backend=NAME --op=NAME --family=NAME --tier=smoke|ci|full
// --seed=N (xor-ed into every case's seed) --failures=DIR (where failing cases are written).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "conformance/known_failures.h"
#include "conformance/options.h"
#include "conformance/steps.h"
#include "core/case_list.h"
#include "core/collective.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) { return "'" + s + "'"; }

// The command that reruns exactly one test: its name as the filter, plus the flags that register it.
std::string rerun_command(const Options& o, const std::string& test_name, Tier tier) {
  return fmt::format("{} --gtest_filter={}{}{}", o.argv0, shell_quote(test_name),
                     tier == Tier::Full ? " --tier=full" : "", o.seed ? fmt::format(" --seed={}", o.seed) : "");
}

void report_failure(const Options& opt, const std::string& test_name, Tier tier, Backend& b, const Case& c,
                    const std::string& case_name, const Verdict& v) {
  std::string file;
  try {
    // Under mpiexec every rank judged the same outputs: rank 0 alone writes the case.
    check(world().rank() == 0, "rank 0 writes it");
    fs::create_directories(opt.failures_dir);
    file = (fs::path(opt.failures_dir) /
            fmt::format("{}__{}.safetensors", b.name(), case_file_stem(c.op->name(), case_name, c.dtype)))
               .string();
    write_safetensors(file, case_to_file(*c.op, c.params, c.tensors, c.expected, c.seed));
  } catch (const Error& e) {
    file = fmt::format("(could not write the case: {})", e.what());
  }
  ADD_FAILURE() << verdict_report("backend=" + b.name(), c, case_name, v)
                << fmt::format("  rerun:  {}\n  case:   {}  (touchstone check {} --backend {})",
                               rerun_command(opt, test_name, tier), file, file, b.name());
}

// Runs a case, then applies the known-failure list and prints the repro on failure.
void judge(const Options& opt, const std::string& test_name, Tier tier, Backend& b, const Case& c,
           const std::string& case_name) {
  const Verdict v = check_case(b, c, b.deterministic(*c.op));
  const KnownFailure* known = find_known_failure(b.name(), c.op->name(), case_name, std::string(dtype_name(c.dtype)));
  switch (classify(v, known)) {
    case Outcome::Unsupported: GTEST_SKIP() << "unsupported: " << v.unsupported;
    case Outcome::Pass: break;
    case Outcome::Fail: report_failure(opt, test_name, tier, b, c, case_name, v); break;
    case Outcome::Known: std::cout << "[ KNOWN    ] " << test_name << ": " << known->reason << "\n" << v.describe(); break;
    case Outcome::UnexpectedPass:
      ADD_FAILURE() << "unexpected pass of a known failure (remove it from conformance/known_failures.cpp): "
                    << known->reason;
      break;
  }
}

class CaseTest : public ::testing::Test {
 public:
  CaseTest(const Options& o, std::string backend, const CaseEntry& e)
      : o_(o), name_(e.test_name(backend)), backend_(std::move(backend)), e_(e) {}
  void TestBody() override {
    Backend& b = backend(backend_);
    if (!b.availability().ok) GTEST_SKIP() << "backend " << backend_ << " unavailable: " << b.availability().detail;
    const Problem pr = e_.problem();
    if (auto s = b.supports(pr); !s.ok) GTEST_SKIP() << "unsupported: " << s.reason;
    const uint64_t seed = e_.seed() ^ o_.seed;
    RecordProperty("seed", std::to_string(seed));  // in --gtest_output=xml/json for every case
    RecordProperty("params", params_str(e_.op->to_map(e_.spec->params)));
    // Every generated case says how to get it back alone, pass or fail.
    std::cout << fmt::format("[ SEED     ] {} seed={} rerun: {}\n", name_, seed, rerun_command(o_, name_, e_.tier()));
    const Case c = generate_case(pr, seed);
    judge(o_, name_, e_.tier(), b, c, e_.case_name());
  }

 private:
  const Options& o_;
  std::string name_, backend_;
  CaseEntry e_;
};

class GoldenTest : public ::testing::Test {
 public:
  GoldenTest(const Options& o, std::string test_name, std::string backend, std::string path)
      : o_(o), name_(std::move(test_name)), backend_(std::move(backend)), path_(std::move(path)) {}
  void TestBody() override {
    Backend& b = backend(backend_);
    if (!b.availability().ok) GTEST_SKIP() << "backend " << backend_ << " unavailable: " << b.availability().detail;
    Case c;
    try {
      c = load_case(path_);
    } catch (const Error& e) {
      FAIL() << "golden file unreadable: " << e.what();
    }
    ASSERT_FALSE(c.expected.empty()) << path_ << " has no expected.* tensors";
    if (auto s = b.supports(c); !s.ok) GTEST_SKIP() << "unsupported: " << s.reason;
    judge(o_, name_, Tier::Ci, b, c, fs::path(path_).stem().string());  // goldens register at every tier
  }

 private:
  const Options& o_;
  std::string name_, backend_, path_;
};

}  // namespace

int register_matrix(const Options& o) {
  CaseFilter f{.max_tier = o.tier, .op = o.op, .family = o.family};
  // Under mpiexec: the collective cases of this world only.
  if (o.world)
    f.keep = [&o](const Op& op, const CaseSpec& spec) {
      return is_collective(op) && op.to_map(spec.params).at("world_size") == std::to_string(o.world);
    };
  const std::vector<CaseEntry> entries = enumerate_cases(f);
  int n = 0;
  for (const std::string& bname : backend_names()) {
    if (!o.backend.empty() && o.backend != bname) continue;
    for (const CaseEntry& e : entries) {
      const std::string suite = e.test_suite(bname), test = e.name();
      ::testing::RegisterTest(suite.c_str(), test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                              [=, &o]() -> ::testing::Test* { return new CaseTest(o, bname, e); });
      ++n;
      // One prepared launch run on several steps of new values: at the case's first dtype (the
      // plan's value-independence does not vary with the dtype; the matrix covers the others).
      if (e.dtype == e.spec->dtypes.front()) register_steps_test(o, bname, e), ++n;
    }
    if (o.golden_dir.empty() || !fs::is_directory(o.golden_dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(o.golden_dir)) {
      if (entry.path().extension() != ".safetensors") continue;
      const std::string stem = entry.path().stem().string();
      const std::string op_name(op_of_file_stem(stem));
      if (!o.op.empty() && o.op != op_name) continue;
      const Op* op = find_op(op_name);
      if (op && !o.family.empty() && o.family != op->family()) continue;
      // Under mpiexec: the collective goldens of this world only (their case names say it: "_w4_").
      if (o.world && (!op || !is_collective(*op) || stem.find(fmt::format("_w{}_", o.world)) == std::string::npos))
        continue;
      const std::string suite = bname + "/golden";
      const std::string full = suite + "." + stem;
      const std::string path = entry.path().string();
      ::testing::RegisterTest(suite.c_str(), stem.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                              [=, &o]() -> ::testing::Test* { return new GoldenTest(o, full, bname, path); });
      ++n;
    }
  }
  return n;
}

}  // namespace ts
