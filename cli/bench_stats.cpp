#include "cli/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ts::bench_stats {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

UTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return {0, 1};
  // Midranks of the pooled sample; each run of ties adds t^3 - t to the variance correction.
  std::vector<std::pair<double, int>> pooled;
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_a = 0, ties = 0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double midrank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_a += midrank;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const double u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double n = n1 + n2;
  const double variance = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)));
  if (variance <= 0) return {u, 1};  // every value the same: no evidence of any difference
  const double z = std::max(0.0, std::fabs(u - n1 * n2 / 2) - 0.5) / std::sqrt(variance);
  return {u, std::min(1.0, std::erfc(z / std::sqrt(2.0)))};
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::NoVerdict: return "no verdict";
    case Verdict::Unchanged: return "unchanged";
    case Verdict::Small: return "small change";
    case Verdict::Improved: return "IMPROVED";
    case Verdict::Regressed: return "REGRESSION";
    case Verdict::Unconfirmed: return "unconfirmed";
  }
  return "?";
}

Judgement judge(const std::vector<double>& old_figures, const std::vector<double>& new_figures, const Thresholds& t) {
  Judgement j;
  if (old_figures.size() < t.min_repetitions || new_figures.size() < t.min_repetitions) return j;
  j.old_median = median(old_figures);
  j.new_median = median(new_figures);
  if (!(j.old_median > 0) || !(j.new_median >= 0)) return j;
  j.change = j.new_median / j.old_median - 1;
  j.p = mann_whitney(new_figures, old_figures).p;
  if (j.p >= t.alpha)
    j.verdict = Verdict::Unchanged;
  else if (std::fabs(j.change) < t.min_effect)
    j.verdict = Verdict::Small;
  else
    j.verdict = j.change < 0 ? Verdict::Regressed : Verdict::Improved;
  return j;
}

Verdict confirm(const Judgement& normalised, const Judgement& raw) {
  const Verdict n = normalised.verdict, r = raw.verdict;
  if (n == Verdict::NoVerdict || r == Verdict::NoVerdict) return Verdict::NoVerdict;
  const auto changed = [](Verdict v) { return v == Verdict::Regressed || v == Verdict::Improved; };
  if (n == r) return n;
  if (changed(n) || changed(r)) return Verdict::Unconfirmed;
  return n;  // neither beyond the floor: the normalised judgement stands
}

}  // namespace ts::bench_stats
