// Every integer parameter of every op, in every conformance case, set to values that wrap 32- and
// 64-bit arithmetic (2^31, 2^32, 2^62, 2^63 - 1, and -1): reading and validating the case must give
// one clean Error or accept it, never a signal and never another exception; a case accepted runs its
// reference, which must not crash either. A description that adds a raw `a + b` or `a * b` of
// parameters shows up here: in a plain build as a crash when the wrapped value lets a bad index through
// (kv_append_paged's cache_len_before + tokens did), and in CI's UBSan build (-fno-sanitize-recover)
// as the overflow itself, at the line that computes it.
//
// Each op runs in a child process, so a signal names the op, case, parameter and value that raised
// it instead of ending the whole test binary; an attempt that runs past 10 s ends in SIGALRM (the
// work a case asks for must be bounded by its tensors too).
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/case_file.h"
#include "core/op.h"
#include "reference/kernels.h"

namespace ts {
namespace {

constexpr int64_t kExtremes[] = {int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 62,
                                 std::numeric_limits<int64_t>::max(), -1};

bool is_integer(const std::string& s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// What the child reports through: the attempt in progress (read by the parent when the child dies
// of a signal) and the first failure found.
struct Report {
  char attempt[512];
  char failure[1024];
};

void note(char* dst, size_t n, const std::string& s) {
  std::snprintf(dst, n, "%s", s.c_str());
}

// Returns 0 when every attempt ends in an Error or a clean run, 1 (with report->failure) otherwise.
int sweep(const Op& op, Report* report) {
  for (const CaseSpec& c : op.cases()) {
    const DType dt = c.dtypes.front();
    const Problem pr = make_problem(op, c.params, dt);
    const TensorMap inputs = op.make_case(pr, 1);
    const SafetensorsFile good = case_to_file(op, c.params, inputs, {}, 1);
    for (const auto& [key, value] : op.to_map(c.params)) {
      if (!is_integer(value)) continue;
      for (int64_t v : kExtremes) {
        const std::string what = fmt::format("{} case {} ({}): {}={} (was {})", op.name(), c.name, dtype_name(dt), key, v, value);
        note(report->attempt, sizeof report->attempt, what);
        alarm(10);  // a case accepted must not run for ages either: SIGALRM names the attempt
        SafetensorsFile f = good;
        f.metadata[key] = std::to_string(v);
        try {
          const Case k = case_from_file(f);
          TensorMap t = working_set(k);
          ref::run(op, k.params, t);
        } catch (const Error& e) {
          if (std::strchr(e.what(), '\n')) {
            note(report->failure, sizeof report->failure, what + ": a message of more than one line: " + e.what());
            return 1;
          }
        } catch (const std::exception& e) {
          note(report->failure, sizeof report->failure, what + ": not an Error but " + e.what());
          return 1;
        }
        alarm(0);  // the attempt is over: generating the next case is not part of it
      }
    }
  }
  return 0;
}

TEST(ParamExtremes, EveryIntegerParameterOfEveryOpIsRefusedCleanly) {
  auto* report = static_cast<Report*>(
      mmap(nullptr, sizeof(Report), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(report, MAP_FAILED);
  for (const Op* op : all_ops()) {
    std::memset(report, 0, sizeof(Report));
    std::fflush(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(sweep(*op, report));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
      ADD_FAILURE() << "signal " << WTERMSIG(status) << " (" << strsignal(WTERMSIG(status)) << ") at " << report->attempt;
    else if (WEXITSTATUS(status) != 0)
      ADD_FAILURE() << (report->failure[0] ? report->failure : report->attempt) << " (exit " << WEXITSTATUS(status) << ")";
  }
  munmap(report, sizeof(Report));
}

}  // namespace
}  // namespace ts
