#include "bench/stable_names.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "core/comm.h"
#include "core/error.h"

namespace ts::bench {

namespace {

// A reporter of Google Benchmark's own kind that reports every run under its name without the
// iteration suffix.
template <class Base> class StableNames : public Base {
 public:
  using Base::Base;
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    std::vector<benchmark::BenchmarkReporter::Run> renamed = runs;
    for (auto& r : renamed) r.run_name.iterations.clear();
    Base::ReportRuns(renamed);
  }
};

// Google Benchmark's reading of --benchmark_color: "auto" colours a terminal only.
bool colour(const std::string& flag) {
  if (flag == "auto") {
    const char* term = std::getenv("TERM");
    return isatty(STDOUT_FILENO) && term && std::string(term) != "dumb";
  }
  return flag == "true" || flag == "yes" || flag == "1" || flag == "on";
}

std::unique_ptr<benchmark::BenchmarkReporter> reporter(const std::string& format, bool colour_it, bool tabular) {
  if (format == "json") return std::make_unique<StableNames<benchmark::JSONReporter>>();
  if (format == "csv") {
    // Google Benchmark marks its CSV reporter deprecated but still offers --benchmark_format=csv: so
    // does touchstone-bench, for as long as the library has it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return std::make_unique<StableNames<benchmark::CSVReporter>>();
#pragma GCC diagnostic pop
  }
  check(format == "console", "--benchmark_format / --benchmark_out_format: '{}' is not console, json or csv", format);
  int opts = benchmark::ConsoleReporter::OO_None;
  if (colour_it) opts |= benchmark::ConsoleReporter::OO_Color;
  if (tabular) opts |= benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<StableNames<benchmark::ConsoleReporter>>(
      static_cast<benchmark::ConsoleReporter::OutputOptions>(opts));
}

// `name` as a literal inside an extended regular expression.
std::string escaped(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (std::string_view(".[]()*+?{}|^$\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string filter_with_capped(const std::string& filter, const std::vector<std::string>& capped) {
  if (capped.empty() || filter.empty() || filter == "all" || filter[0] == '-') return filter;
  const std::string suffix = "/manual_time";
  std::string alt;
  for (const std::string& listed : capped) {
    check(listed.size() > suffix.size() && listed.ends_with(suffix), "capped benchmark '{}' is not manual-time", listed);
    if (!alt.empty()) alt += '|';
    alt += escaped(listed.substr(0, listed.size() - suffix.size()));
  }
  return fmt::format("({})|^({})/iterations:[0-9]+/manual_time$", filter, alt);
}

size_t run_with_stable_names(const Options& o, const std::vector<std::string>& capped) {
  const auto display = reporter(o.format, o.format == "console" && colour(o.color), o.counters_tabular);
  // Under mpiexec every rank runs the benchmarks and rank 0 alone reports: the others' reporter
  // (its context block goes to the error stream) writes nowhere.
  static std::ofstream nowhere;
  if (world().rank() != 0) {
    display->SetOutputStream(&nowhere);
    display->SetErrorStream(&nowhere);
  }
  const std::string filter = filter_with_capped(benchmark::GetBenchmarkFilter(), capped);
  if (o.out.empty()) return benchmark::RunSpecifiedBenchmarks(display.get(), nullptr, filter);
  const auto file = reporter(o.out_format, false, o.counters_tabular);
  return benchmark::RunSpecifiedBenchmarks(display.get(), file.get(), filter);
}

}  // namespace ts::bench
