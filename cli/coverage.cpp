// touchstone coverage: a backend's coverage manifest (core/coverage.h), or its check against the one
// checked in (ci/coverage/<backend>.txt, what ci/gate.sh runs).
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/coverage.h"

namespace ts::cli {

int cmd_coverage(const std::vector<std::string>& argv) {
  Args a(argv, {"backend", "device", "check"}, {});
  check(a.positional().empty(), "coverage takes no positional arguments");
  const std::string name = a.require("backend");
  apply_device_flag(a, name);
  Backend& b = backend(name);
  const Availability av = b.availability();
  check(av.ok, "backend {} is unavailable: {}", name, av.detail);
  const auto file = a.get("check");
  if (!file) {
    std::cout << coverage_manifest(b);
    return 0;
  }
  std::ifstream in(*file, std::ios::binary);
  check(static_cast<bool>(in), "cannot open coverage manifest '{}'", *file);
  std::ostringstream text;
  text << in.rdbuf();
  const std::vector<std::string> listed = manifest_cases(text.str());
  check(!listed.empty(), "coverage manifest '{}' lists no case", *file);
  const std::vector<std::string> covered = covered_cases(b);
  const CoverageDiff d = compare_coverage(listed, covered);
  for (const std::string& k : d.dropped) std::cout << "dropped  " << k << "\n";
  for (const std::string& k : d.unknown) std::cout << "unknown  " << k << " (no case of the catalog has this name)\n";
  if (!d.added.empty())
    std::cout << fmt::format("{} supports {} cases more than {} lists (regenerate it: touchstone coverage --backend {} > {})\n",
                             name, d.added.size(), *file, name, *file);
  std::cout << fmt::format("coverage of {}: {} cases supported, {} listed, {} dropped, {} unknown\n", name,
                           covered.size(), listed.size(), d.dropped.size(), d.unknown.size());
  return d.dropped_any() ? 1 : 0;
}

}  // namespace ts::cli
