#include "bench/options.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>

#include "core/error.h"

namespace ts::bench {

namespace {

std::vector<DType> parse_dtypes(const std::string& list) {
  if (list == "all") return {DType::F32, DType::F16, DType::BF16};
  std::vector<DType> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    const auto dt = dtype_from_name(name);
    check(dt && is_float(*dt), "--dtypes: '{}' is not a float dtype (F32, F16, BF16, ... or 'all')", name);
    out.push_back(*dt);
    start = comma + 1;
  }
  return out;
}

uint64_t parse_unsigned(const std::string& flag, const std::string& s) {
  uint64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  check(ec == std::errc() && p == end && !s.empty(), "{}: '{}' is not an unsigned integer", flag, s);
  return v;
}

// `a` is `flag` followed by a value: the value into `into`.
void take_value(const std::string& a, std::string_view flag, std::string& into) {
  if (a.rfind(flag, 0) == 0) into = a.substr(flag.size());
}

}  // namespace

Options take_options(int& argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--include-reference") {
      o.include_reference = true;
    } else if (a == "--warm-cache") {
      o.warm_cache = true;
    } else if (a.rfind("--dtypes=", 0) == 0) {
      o.dtypes = parse_dtypes(a.substr(9));
    } else if (a.rfind("--seed=", 0) == 0) {
      o.seed = parse_unsigned("--seed", a.substr(7));
    } else if (a.rfind("--cold-iterations=", 0) == 0) {
      const uint64_t n = parse_unsigned("--cold-iterations", a.substr(18));
      check(n <= 1000000, "--cold-iterations: {} is more than 10^6", n);
      o.cold_iterations = static_cast<int64_t>(n);
    } else if (a.rfind("--collective-rounds=", 0) == 0) {
      const uint64_t n = parse_unsigned("--collective-rounds", a.substr(20));
      check(n >= 1 && n <= 1000, "--collective-rounds: {} is not between 1 and 1000", n);
      o.collective_rounds = static_cast<int>(n);
    } else if (a.rfind("--collective-sizes=", 0) == 0) {
      const std::string v = a.substr(19);
      check(v == "short" || v == "full", "--collective-sizes: '{}' is neither short nor full", v);
      o.collective_full = v == "full";
    } else {
      if (a.rfind("--benchmark_min_time=", 0) == 0) o.min_time = std::atof(a.c_str() + 21);  // it checks the value
      if (a == "--benchmark_list_tests" || a == "--benchmark_list_tests=true") o.listing = true;
      take_value(a, "--benchmark_format=", o.format);
      take_value(a, "--benchmark_out=", o.out);
      take_value(a, "--benchmark_out_format=", o.out_format);
      take_value(a, "--benchmark_color=", o.color);
      if (a == "--benchmark_color") o.color = "true";
      if (a == "--benchmark_counters_tabular" || a == "--benchmark_counters_tabular=true") o.counters_tabular = true;
      argv[kept++] = argv[i];  // Google Benchmark's, or unknown: it reports those
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return o;
}

void print_help() {
  std::printf(
      "touchstone-bench: every backend x op x bench preset x dtype, named <op>/<backend>/<preset>/<dtype>,\n"
      "and the machine's own limits under baseline/ (stream_triad, stream_read, paged_read, fma_peak,\n"
      "cblas_sgemm, clblast_sgemm).\n"
      "\n"
      "touchstone flags:\n"
      "  --include-reference   also benchmark the scalar reference backend (slow on model-sized presets)\n"
      "  --dtypes=LIST         float dtypes to register, e.g. F32,F16,BF16 or 'all' (default F32)\n"
      "  --seed=N              seed for the generated inputs (default 1)\n"
      "  --warm-cache          do not evict the caches before each timed iteration (by default every\n"
      "                        op is timed from memory: a read of 2x the last-level cache comes first)\n"
      "  --cold-iterations=N   at most N iterations per repetition of an op that, timed once before the\n"
      "                        run, would need more than N to fill --benchmark_min_time (default 30; 0:\n"
      "                        no cap). Each iteration pays a cache flush of milliseconds: a microsecond\n"
      "                        op would otherwise run ~10^5 of them. A capped benchmark keeps the name\n"
      "                        --benchmark_list_tests prints (no /iterations:N), on any machine\n"
      "  --collective-rounds=N under mpiexec: register the collective benchmarks N times, round by round,\n"
      "                        so that a backend's collective and MPI_Allreduce alternate in time (default 1)\n"
      "  --collective-sizes=short|full  under mpiexec: each rank's buffer 8 B, 1 KiB, 64 KiB, 1 MiB and 16 MiB\n"
      "                        (short, the default), or 8 B and every power of 4 from 16 B to 256 MiB (full)\n"
      "\n"
      "Under mpiexec -n W every rank runs the collective family alone: collective/<backend>/<op>_w<W>_<bytes>,\n"
      "baseline/mpi_allreduce_w<W>_<bytes> and baseline/host_memcpy_w<W>_<bytes>, counters algbw and busbw\n"
      "(nccl-tests' definitions); rank 0 alone prints and writes --benchmark_out.\n"
      "\n"
      "Google Benchmark flags (e.g. --benchmark_filter=gemm/cpu --benchmark_format=json):\n");
  benchmark::PrintDefaultHelp();
}

}  // namespace ts::bench
