#include "cli/bench_compare.h"

#include "core/traffic.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace ts::cli {

namespace {

using bench_stats::Judgement;
using bench_stats::Verdict;

// What a benchmark is judged on. A kernel is bound by memory when its arithmetic intensity (FLOP per
// byte, from the op's cost model) is below the machine balance (FMA peak / triad), by compute
// otherwise; a memory-bound kernel that writes under a tenth of what it reads (its write_share,
// core/op.h kReadDominated: a decode GEMV, KV decode) is bound by reads, and judged against the
// read-only stream where both runs measured one: the same classes as report/benchruns.py. Dividing
// each repetition by the limit that binds it, measured in the same run, takes out what moves every
// kernel at once (a busier or slower machine, a different clock): what is left is the kernel's own
// share of the roof. The class is decided once, from the baseline, so both sides are divided by the
// same kind of limit.
enum class Bound { Read, Memory, Compute, Time };

// The roofs one benchmark is divided by: the host's (triad, FMA peak for the balance, cblas sgemm), or,
// for a device backend whose roofs both records measured, its device's (copy stream, F32 FMA peak for
// both the balance and the compute roof).
struct Roofs {
  double mem = 0, fma = 0, compute = 0;
  double read = 0;  // the read-only stream (the device's read stream for a device backend); 0: none
  bool device = false;
};

Roofs roofs_for(const std::string& name, const Limits& l, bool use_device) {
  if (use_device) {
    const size_t a = name.find('/'), b = a == std::string::npos ? a : name.find('/', a + 1);
    if (b != std::string::npos) {
      const auto it = l.devices.find(name.substr(a + 1, b - a - 1));
      if (it != l.devices.end()) return {it->second.copy, it->second.fma_f32, it->second.fma_f32, it->second.read, true};
    }
  }
  return {l.triad_bytes_per_second, l.fma_peak_flops, l.sgemm_flops.at(kSgemmReference), l.read_bytes_per_second,
          false};
}

// Whether both records measured the device roofs (copy and F32 FMA) of the benchmark's backend.
bool both_have_device_roofs(const std::string& name, const Limits& o, const Limits& n) {
  const Roofs a = roofs_for(name, o, true), b = roofs_for(name, n, true);
  return a.device && b.device && a.mem > 0 && a.fma > 0 && b.mem > 0 && b.fma > 0;
}

// `both_read`: both runs measured the read roof this benchmark would be judged by.
Bound bound_of(const Repetitions& r, const Roofs& l, bool both_read) {
  const double bytes = r.bytes_per_second.empty() ? 0 : bench_stats::median(r.bytes_per_second);
  const double flops = r.flops.empty() ? 0 : bench_stats::median(r.flops);
  if (bytes <= 0 && flops <= 0) return Bound::Time;  // no cost model: judged on raw speed, 1 / time
  if (bytes <= 0) return Bound::Compute;
  if (flops / bytes >= l.fma / l.mem) return Bound::Compute;
  return both_read && r.write_share >= 0 && r.write_share < kReadDominated ? Bound::Read : Bound::Memory;
}

std::vector<double> normalised(const Repetitions& r, const Roofs& l, Bound b) {
  std::vector<double> out;
  for (size_t i = 0; i < r.seconds.size(); ++i) {
    if (b == Bound::Read) out.push_back(r.bytes_per_second[i] / l.read);
    if (b == Bound::Memory) out.push_back(r.bytes_per_second[i] / l.mem);
    if (b == Bound::Compute) out.push_back(r.flops[i] / l.compute);
    if (b == Bound::Time) out.push_back(r.seconds[i] > 0 ? 1.0 / r.seconds[i] : 0.0);
  }
  return out;
}

std::string figure(double x, Bound b) {
  return b == Bound::Time ? fmt::format("{:.4g}/s", x) : fmt::format("{:.2f}%", 100 * x);
}

std::string change(double c) { return fmt::format("{:+.1f}%", 100 * c); }

void print_limits(const Limits& o, const Limits& n, std::ostream& out) {
  const auto row = [&](const std::string& name, double a, double b, double scale, const char* unit) {
    out << fmt::format("  {:<34} {:>10.1f} {:>10.1f} {:>8}  {}\n", name, a / scale, b / scale, change(b / a - 1), unit);
  };
  out << fmt::format("machine limits (medians)             {:>10} {:>10} {:>8}\n", "baseline", "this run", "change");
  row("stream triad", o.triad_bytes_per_second, n.triad_bytes_per_second, 1e9, "GB/s");
  if (o.read_bytes_per_second > 0 && n.read_bytes_per_second > 0)
    row("stream read", o.read_bytes_per_second, n.read_bytes_per_second, 1e9, "GB/s");
  row("fma peak", o.fma_peak_flops, n.fma_peak_flops, 1e9, "GFLOP/s");
  for (const auto& [preset, flops] : o.sgemm_flops)
    if (n.sgemm_flops.count(preset)) row("cblas sgemm " + preset, flops, n.sgemm_flops.at(preset), 1e9, "GFLOP/s");
  for (const auto& [backend, d] : o.devices) {
    const auto it = n.devices.find(backend);
    if (it == n.devices.end()) continue;
    const DeviceRoofs& e = it->second;
    if (d.read > 0 && e.read > 0) row(backend + " device read", d.read, e.read, 1e9, "GB/s");
    if (d.copy > 0 && e.copy > 0) row(backend + " device copy", d.copy, e.copy, 1e9, "GB/s");
    if (d.fma_f32 > 0 && e.fma_f32 > 0) row(backend + " device fma f32", d.fma_f32, e.fma_f32, 1e9, "GFLOP/s");
    if (d.fma_f16 > 0 && e.fma_f16 > 0) row(backend + " device fma f16", d.fma_f16, e.fma_f16, 1e9, "GFLOP/s");
  }
}

}  // namespace

CompareSummary compare_records(const Record& old_run, const Record& new_run, const bench_stats::Thresholds& t,
                               std::ostream& out) {
  print_limits(old_run.limits, new_run.limits, out);
  std::set<std::string> names;
  for (const auto* r : {&old_run, &new_run})
    for (const auto& [name, reps] : r->runs)
      if (name.rfind("baseline/", 0) != 0) names.insert(name);
  size_t w = std::string("benchmark").size();
  for (const auto& n : names) w = std::max(w, n.size());

  out << "\njudged on: read = bytes/s as a fraction of the run's read-only stream (a benchmark that writes under "
      << kReadDominated * 100 << "% of what it reads, where both runs measured the stream), mem = bytes/s as a "
      << "fraction of its triad, compute = FLOP/s as a fraction of its cblas sgemm " << kSgemmReference
      << " (a device backend whose roofs both runs measured: \"dev\", of its device's read stream, copy stream and"
         " F32 FMA peak)"
      << fmt::format("; U test alpha {}, minimum effect {:.0f}%; a change must show both normalised and raw\n", t.alpha, 100 * t.min_effect);
  const std::string header = fmt::format("{:<{}} {:>11} {:>9} {:>9} {:>8} {:>8} {:>7}  {}", "benchmark", w, "bound",
                                         "old", "new", "change", "raw", "p", "verdict");
  out << header << "\n" << std::string(header.size(), '-') << "\n";
  CompareSummary s;
  std::vector<std::string> notes;
  for (const std::string& name : names) {
    const auto o = old_run.runs.find(name), n = new_run.runs.find(name);
    if (o == old_run.runs.end() || n == new_run.runs.end()) {
      ++s.missing;
      notes.push_back(fmt::format("{}: only in the {}", name, o == old_run.runs.end() ? "new run" : "baseline"));
      continue;
    }
    if (!o->second.error.empty() || !n->second.error.empty()) {
      ++s.missing;
      notes.push_back(fmt::format("{}: did not run: {}", name, !n->second.error.empty()
                                                                  ? "this run: " + n->second.error
                                                                  : "baseline: " + o->second.error));
      continue;
    }
    const bool dev = both_have_device_roofs(name, old_run.limits, new_run.limits);
    const Roofs ro = roofs_for(name, old_run.limits, dev), rn = roofs_for(name, new_run.limits, dev);
    const Bound b = bound_of(o->second, ro, ro.read > 0 && rn.read > 0);
    const Judgement j = bench_stats::judge(normalised(o->second, ro, b), normalised(n->second, rn, b), t);
    // Judged on raw speed too: the change beside it shows how much of a move the machine explains, and a
    // regression must show on both (bench_stats::confirm).
    const Judgement raw = bench_stats::judge(normalised(o->second, ro, Bound::Time),
                                             normalised(n->second, rn, Bound::Time), t);
    const Verdict v = bench_stats::confirm(j, raw);
    ++s.compared;
    if (v == Verdict::Regressed) ++s.regressed;
    if (v == Verdict::Improved) ++s.improved;
    if (v == Verdict::NoVerdict) ++s.no_verdict;
    const std::string bound = std::string(b == Bound::Read      ? "read"
                                          : b == Bound::Memory  ? "mem"
                                          : b == Bound::Compute ? "compute"
                                                                : "time") +
                              (dev && b != Bound::Time ? " dev" : "");
    if (v == Verdict::NoVerdict) {
      out << fmt::format("{:<{}} {:>11} {:>9} {:>9} {:>8} {:>8} {:>7}  no verdict ({} and {} repetitions; at least {} a side)\n",
                         name, w, bound, "", "", "", "", "", o->second.seconds.size(), n->second.seconds.size(),
                         t.min_repetitions);
      continue;
    }
    out << fmt::format("{:<{}} {:>11} {:>9} {:>9} {:>8} {:>8} {:>7.4f}  {}\n", name, w, bound, figure(j.old_median, b),
                       figure(j.new_median, b), change(j.change), change(raw.change), j.p,
                       v == Verdict::Unconfirmed
                           ? fmt::format("unconfirmed ({} only)", j.verdict == Verdict::Regressed ||
                                                                          j.verdict == Verdict::Improved
                                                                      ? "normalised"
                                                                      : "raw")
                           : bench_stats::verdict_name(v));
  }
  for (const auto& note : notes) out << "  " << note << "\n";
  out << fmt::format("\n{} compared: {} regressions, {} improvements, {} without a verdict; {} not in both runs\n",
                     s.compared, s.regressed, s.improved, s.no_verdict, s.missing);
  return s;
}

}  // namespace ts::cli
