// touchstone matrix: the conformance matrix in one process with a readable summary (op x backend:
// cases passed / failed / unsupported). The GoogleTest binary (touchstone-conformance) is the CI
// form of the same cases; both judge through conformance/check.h.
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "conformance/check.h"
#include "conformance/known_failures.h"
#include "core/backend.h"
#include "core/case_file.h"
#include "core/case_list.h"

namespace ts::cli {

namespace {

struct Tally {
  int pass = 0, fail = 0, known = 0, unsupported = 0;
  std::string cell() const {
    if (pass + fail + known == 0) return unsupported ? "unsupported" : "-";
    std::string s = fail ? fmt::format("FAIL {}/{}", fail, pass + fail + known) : fmt::format("{} ok", pass);
    if (known) s += fmt::format(" +{} known", known);
    if (unsupported) s += fmt::format(" {} skip", unsupported);
    return s;
  }
};

}  // namespace

int cmd_matrix(const std::vector<std::string>& argv) {
  Args a(argv, {"backend", "op", "tier", "device"}, {"verbose"});
  Tier tier = Tier::Ci;
  if (auto t = a.get("tier")) tier = tier_or_throw(*t);
  const auto op_filter = a.get("op");
  if (op_filter) op_or_throw(*op_filter);
  std::vector<Backend*> backends;
  for (const auto& n : backend_names()) {
    if (a.get("backend") && *a.get("backend") != n) continue;
    apply_device_flag(a, n);
    Backend& b = backend(n);
    const Availability av = b.availability();
    std::cout << fmt::format("{:<10} {}\n", n, av.ok ? av.detail : "UNAVAILABLE: " + av.detail);
    if (av.ok) backends.push_back(&b);
  }
  if (a.get("backend")) backend(*a.get("backend"));  // unknown name: an Error
  std::cout << fmt::format("\ntier {}\n{:<36}", tier_name(tier), "op");
  for (Backend* b : backends) std::cout << fmt::format(" {:<18}", b->name());
  std::cout << "\n";
  int failures = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Op* op : all_ops()) {
    if (op_filter && *op_filter != op->name()) continue;
    std::cout << fmt::format("{:<36}", op->name()) << std::flush;
    std::vector<std::string> details;
    const std::vector<CaseEntry> entries = op_cases(*op, {.max_tier = tier});
    for (Backend* b : backends) {
      Tally t;
      for (const CaseEntry& e : entries) {
        // "cpu gemm m1_n1_k1/F32": the backend and the case, as every detail line names them.
        const std::string which = fmt::format("{} {} {}", b->name(), op->name(), e.name());
        const Problem pr = e.problem();
        if (const Support s = b->supports(pr); !s.ok) {
          ++t.unsupported;
          if (a.has("verbose")) details.push_back(fmt::format("  skip {}: {}\n", which, s.reason));
          continue;
        }
        const Case c = generate_case(pr, e.seed());
        const Verdict v = check_case(*b, c, b->deterministic(*op));
        const KnownFailure* known = find_known_failure(b->name(), op->name(), e.case_name(), std::string(dtype_name(e.dtype)));
        switch (classify(v, known)) {
          case Outcome::Unsupported:  // refused at plan or launch time: a "no", as from supports()
            ++t.unsupported;
            if (a.has("verbose")) details.push_back(fmt::format("  skip {}: {}\n", which, v.unsupported));
            break;
          case Outcome::Pass: ++t.pass; break;
          case Outcome::Known: ++t.known; break;
          case Outcome::Fail:
            ++t.fail;
            details.push_back(fmt::format("  FAIL {} seed={}\n{}", which, *c.seed, v.describe(true)));
            break;
          case Outcome::UnexpectedPass:
            ++t.fail;
            details.push_back(fmt::format("  FAIL {}: unexpected pass of a known failure (remove it "
                                          "from conformance/known_failures.cpp): {}\n",
                                          which, known->reason));
            break;
        }
      }
      failures += t.fail;
      std::cout << fmt::format(" {:<18}", t.cell()) << std::flush;
    }
    std::cout << "\n";
    for (const auto& d : details) std::cout << d;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << fmt::format("\n{} in {:.1f} s\n", failures ? fmt::format("{} FAILURES", failures) : "all passed", secs);
  return failures ? 1 : 0;
}

}  // namespace ts::cli
