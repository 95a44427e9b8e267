// Every integer parameter of every op, in every conformance case, set to values that wrap 32- and
// 64-bit arithmetic (2^31, 2^32, 2^62, 2^63 - 1, and -1): reading and validating the case must give
// one clean Error or accept it, never a signal and never another exception; a case accepted runs its
// reference, which must not crash either. A description that adds a raw `a + b` or `a * b` of
// parameters shows up here: in a plain build as a crash when the wrapped value lets a bad index through
// (kv_append_paged's cache_len_before + tokens did), and in CI's UBSan build (-fno-sanitize-recover)
// as the overflow itself, at the line that computes it.
//
// The cases run in child processes, so a signal names the op, case, parameter and value that raised
// it instead of ending the whole test binary; an attempt that runs past 10 s ends in SIGALRM (the
// work a case asks for must be bounded by its tensors too).
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <thread>
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

// Every attempt on case c of op must end in an Error or a clean run; the first that does not is noted
// in report->failure, and the case ends there.
void sweep(const Op& op, const CaseSpec& c, Report* report) {
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
          return;
        }
      } catch (const std::exception& e) {
        note(report->failure, sizeof report->failure, what + ": not an Error but " + e.what());
        return;
      }
      alarm(0);  // the attempt is over: generating the next case is not part of it
    }
  }
}

// The cases are shared out among as many child processes as the machine has hardware threads, each
// taking the next from a counter in shared memory, the largest first: one after another, the sweep
// was three minutes of CI's sanitizer build on one core while the other idled. Every case keeps its
// own report, and a child killed by a signal is replaced, so each case that fails is named.
struct Shared {
  std::atomic<size_t> next;
};

TEST(ParamExtremes, EveryIntegerParameterOfEveryOpIsRefusedCleanly) {
  struct Item {
    const Op* op;
    const CaseSpec* c;
    double bytes;
  };
  std::vector<Item> items;
  for (const Op* op : all_ops())
    for (const CaseSpec& c : op->cases()) items.push_back({op, &c, op->cost(c.params, c.dtypes.front()).bytes});
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.bytes > b.bytes; });
  const size_t n = items.size(), width = std::max(1u, std::thread::hardware_concurrency());
  // The counter, then per child the case it is on (a child per worker and one per replacement at
  // most: n + width), then a report per case.
  const size_t bytes = sizeof(Shared) + (n + width) * sizeof(size_t) + n * sizeof(Report);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  std::memset(mem, 0, bytes);
  static_assert(std::atomic<size_t>::is_always_lock_free, "a counter shared between processes");
  auto* shared = new (mem) Shared{};
  auto* current = reinterpret_cast<size_t*>(static_cast<char*>(mem) + sizeof(Shared));
  auto* reports = reinterpret_cast<Report*>(current + n + width);
  std::map<pid_t, size_t> running;  // child -> its slot in `current`
  size_t slots = 0;
  auto spawn = [&] {
    const size_t slot = slots++;
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      for (size_t i; (i = shared->next.fetch_add(1)) < n;) {
        current[slot] = i;
        sweep(*items[i].op, *items[i].c, &reports[i]);
      }
      _exit(0);
    }
    if (pid > 0) running[pid] = slot;
    return pid > 0;
  };
  for (size_t w = 0; w < width; ++w) ASSERT_TRUE(spawn());
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    ASSERT_GT(pid, 0);
    const auto it = running.find(pid);
    ASSERT_NE(it, running.end());
    const size_t slot = it->second;
    running.erase(it);
    if (WIFSIGNALED(status)) {
      ADD_FAILURE() << "signal " << WTERMSIG(status) << " (" << strsignal(WTERMSIG(status)) << ") at "
                    << reports[current[slot]].attempt;
      if (shared->next.load() < n) {
        ASSERT_TRUE(spawn());  // the rest of the cases
      }
    } else if (WEXITSTATUS(status) != 0) {
      ADD_FAILURE() << "exit " << WEXITSTATUS(status) << " at " << reports[current[slot]].attempt;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (reports[i].failure[0]) ADD_FAILURE() << reports[i].failure;
  munmap(mem, bytes);
}

}  // namespace
}  // namespace ts
