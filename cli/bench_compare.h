#pragma once
// `touchstone bench compare`'s judgement of two records: per benchmark, the repetitions normalised by
// their own run's machine limit, a U test and an effect floor (cli/bench_stats.h), one table.
#include <ostream>

#include "cli/bench_record.h"
#include "cli/bench_stats.h"

namespace ts::cli {

struct CompareSummary {
  int compared = 0, regressed = 0, improved = 0, missing = 0, no_verdict = 0;
};

// Prints the machine's limits in both runs, then one row per benchmark of either record.
CompareSummary compare_records(const Record& old_run, const Record& new_run, const bench_stats::Thresholds& t,
                               std::ostream& out);

}  // namespace ts::cli
