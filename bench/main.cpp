// touchstone-bench: Google Benchmark over every backend x op x bench preset, plus the machine's own
// limits (baseline/*) measured in the same run. Takes Google Benchmark's flags and a few of ours.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/ranges.h>

#include <benchmark/benchmark.h>

#include "bench/all_cores.h"
#include "bench/baselines.h"
#include "bench/collective_benches.h"
#include "bench/graph_benches.h"
#include "bench/op_benches.h"
#include "bench/options.h"
#include "bench/setup_cache.h"
#include "bench/stable_names.h"
#include "core/backend.h"
#include "core/comm.h"
#include "core/error.h"
#include "cpu/runtime/prefetch.h"
#include "mpi/world_scope.h"

int main(int argc, char** argv) {
  // The Vulkan backend turns its validation layer on for tests; it would dominate every timing.
  setenv("TOUCHSTONE_VULKAN_VALIDATION", "0", /*overwrite=*/0);
  // The cpu backend's workers, woken after each cold-cache flush, keep spinning until the timed call
  // starts (up to 20 ms), so a call starts with its threads awake, as in a decode loop
  // (cpu/runtime/thread_pool.cpp, bench/cache_flush.h).
  setenv("TOUCHSTONE_CPU_SPIN_US", "20000", /*overwrite=*/0);
  // The flags as given, so a saved run says how it was measured (`touchstone bench compare` reruns a
  // baseline with the same ones).
  std::string flags;
  for (int i = 1; i < argc; ++i) {
    if (i > 1) flags += ' ';  // appended apart: GCC 12 warns falsely (-Wrestrict) on " " + std::string
    flags += argv[i];
  }
  // Under mpiexec every rank runs the collective benchmarks (and nothing else: W copies of an op's
  // benchmark would only measure each other); rank 0 alone prints and writes --benchmark_out.
  ts::WorldScope world_scope(argc, argv);
  const bool collective_run = ts::launched_by_mpi() && ts::mpi_allreduce_baseline();
  if (ts::world().rank() != 0) {
    if (!std::freopen("/dev/null", "w", stdout)) return 1;
    int kept = 1;
    for (int i = 1; i < argc; ++i)
      if (std::string_view(argv[i]).rfind("--benchmark_out", 0) != 0) argv[kept++] = argv[i];
    argc = kept;
    argv[argc] = nullptr;
  }
  ts::bench::Options o;
  try {
    o = ts::bench::take_options(argc, argv);
  } catch (const ts::Error& e) {
    std::cerr << "touchstone-bench: " << e.what() << "\n";
    return 1;
  }
  benchmark::Initialize(&argc, argv, ts::bench::print_help);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  std::vector<std::string> dtypes;
  for (auto dt : o.dtypes) dtypes.emplace_back(ts::dtype_name(dt));
  benchmark::AddCustomContext("touchstone_backends", fmt::format("{}", fmt::join(ts::backend_names(), ",")));
  benchmark::AddCustomContext("touchstone_dtypes", fmt::format("{}", fmt::join(dtypes, ",")));
  benchmark::AddCustomContext("touchstone_seed", std::to_string(o.seed));
  benchmark::AddCustomContext("touchstone_threads", std::to_string(ts::bench::core_count()));
  // The streaming kernels' prefetch distance, chosen per CPU (cpu/runtime/prefetch.h): a record says which ran.
  benchmark::AddCustomContext("touchstone_cpu_stream_prefetch_bytes", std::to_string(ts::cpu::kStreamPrefetchBytes));
  benchmark::AddCustomContext("touchstone_build_type", TOUCHSTONE_BUILD_TYPE);  // a record states it
  benchmark::AddCustomContext("touchstone_flags", flags);
  // What each backend runs on (the cpu backend's SIMD target, the OpenCL or Vulkan device), so a
  // saved run says what it measured.
  for (const std::string& name : ts::backend_names()) {
    try {
      const ts::Availability a = ts::backend(name).availability();
      benchmark::AddCustomContext("touchstone_device_" + name, a.ok ? a.detail : "unavailable: " + a.detail);
    } catch (const std::exception& e) {
      benchmark::AddCustomContext("touchstone_device_" + name, std::string("unavailable: ") + e.what());
    }
  }

  size_t ran = 0;
  try {
    if (collective_run) {
      benchmark::AddCustomContext("touchstone_world", ts::world().describe());
      ran = ts::bench::run_with_stable_names(o, ts::bench::register_collective_benchmarks(o.collective_rounds, o.collective_full));
    } else {
      std::vector<std::string> capped = ts::bench::register_baselines(o);
      ts::bench::register_graph_benchmarks(o);
      const std::vector<std::string> ops = ts::bench::register_op_benchmarks(o);
      capped.insert(capped.end(), ops.begin(), ops.end());
      ran = ts::bench::run_with_stable_names(o, capped);
    }
  } catch (const std::exception& e) {
    std::cerr << "touchstone-bench: " << e.what() << "\n";
    return 1;
  }
  ts::bench::release_setup();  // before static destruction takes the backends away
  benchmark::Shutdown();
  return ran == 0 ? 1 : 0;  // a filter that matches nothing is a mistake, as in the conformance matrix
}
