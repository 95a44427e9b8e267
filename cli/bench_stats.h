#pragma once
// The statistics of `touchstone bench compare`: is the difference between two sets of repetitions of
// one benchmark real (Mann-Whitney U, as Google Benchmark's compare.py) and large enough to matter
// (a minimum effect on the median)? Figures are "higher is better" (a fraction of a machine limit).
#include <cstddef>
#include <vector>

namespace ts::bench_stats {

double median(std::vector<double> v);  // of a non-empty sample

struct UTest {
  double u;  // U of the first sample: how many (a, b) pairs have a > b, ties counting one half
  double p;  // two-sided
};

// Two-sided Mann-Whitney U test by the normal approximation with the tie correction of the variance
// and a continuity correction (what scipy.stats.mannwhitneyu, which compare.py calls, does for
// samples with ties or over 8 values). With 10 repetitions a side the approximation is within a few
// percent of the exact p; samples that are all one value have no variance and p = 1.
UTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

enum class Verdict {
  NoVerdict,  // fewer than min_repetitions on a side, or a median that is not positive
  Unchanged,  // not significant
  Small,      // significant but below the minimum effect: listed, never fails
  Improved,
  Regressed,  // significant and at least min_effect lower: the one verdict that fails a compare
  // A change beyond the floor in the normalised figure or in the raw one, not in both: the limit's
  // own measurement moved, or the whole machine did. Listed, never fails (see confirm()).
  Unconfirmed,
};
const char* verdict_name(Verdict v);

struct Thresholds {
  double alpha = 0.05;        // significance level of the U test
  double min_effect = 0.10;   // |new median / old median - 1| at least this to count
  // Fewer than 3 a side: no verdict. (With 3 a side the smallest two-sided p is 0.081, so such a
  // benchmark can read unchanged but never changed; 4 a side reach 0.030.)
  size_t min_repetitions = 3;
};

struct Judgement {
  Verdict verdict = Verdict::NoVerdict;
  double old_median = 0, new_median = 0;
  double change = 0;  // new median / old median - 1
  double p = 1;
};

Judgement judge(const std::vector<double>& old_figures, const std::vector<double>& new_figures, const Thresholds& t);

// The verdict of a benchmark judged twice: on its figure normalised by the run's machine limit and on
// its raw speed. A kernel that really got slower (or faster) is so both ways; one that moves on one
// side only moved with the machine (raw only: the roof moved with it) or with the noise of measuring
// the roof (normalised only: the kernel's own time did not change), and neither is the kernel's doing.
// So Regressed and Improved need both judgements to agree; a change on one side only is Unconfirmed.
// (The cost: a kernel 20% slower on a machine that got 20% faster between the records reads
// unconfirmed. Record both sides on one machine in one sitting.)
Verdict confirm(const Judgement& normalised, const Judgement& raw);

}  // namespace ts::bench_stats
