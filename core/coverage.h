#pragma once
// A backend's coverage, derived from the catalog and the backend's own supports(): the conformance
// cases (every tier, every dtype each lists) it takes, one key a case (op/case/DTYPE, core/case_list.h).
// ci/coverage/<backend>.txt is that list as `touchstone coverage --backend B` printed it, checked in;
// the gate (ci/gate.sh) fails when a case listed there is no longer supported, or no longer exists,
// so a backend cannot silently stop supporting one case of one dtype.
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.h"

namespace ts {

// The keys of the conformance cases `b` supports, in catalog order.
std::vector<std::string> covered_cases(Backend& b);
// The manifest as checked in: a header that says how it was made, then covered_cases, one a line.
std::string coverage_manifest(Backend& b);
// A manifest's case keys: every line but blank ones and '#' comments.
std::vector<std::string> manifest_cases(std::string_view text);

struct CoverageDiff {
  std::vector<std::string> dropped;  // listed, a case of the catalog, but no longer supported
  std::vector<std::string> unknown;  // listed, but no case of the catalog has that key (renamed, removed)
  std::vector<std::string> added;    // supported, but not listed yet: regenerate the manifest
  bool dropped_any() const { return !dropped.empty() || !unknown.empty(); }
};
CoverageDiff compare_coverage(const std::vector<std::string>& manifest, const std::vector<std::string>& covered);

}  // namespace ts
