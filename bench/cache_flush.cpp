#include "bench/cache_flush.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/all_cores.h"
#include "core/backend.h"

namespace ts::bench {

namespace {

// The largest cache sysfs reports for cpu0 ("32768K"), or 0 when it says nothing.
size_t last_level_cache_bytes() {
  size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string s;
    if (!(in >> s) || s.empty()) continue;
    size_t v = std::stoull(s);
    if (s.back() == 'K') v <<= 10;
    if (s.back() == 'M') v <<= 20;
    best = std::max(best, v);
  }
  return best;
}

std::vector<uint64_t>& buffer() {
  static std::vector<uint64_t> b(std::max<size_t>(64u << 20, 2 * last_level_cache_bytes()) / sizeof(uint64_t), 1);
  return b;
}

}  // namespace

size_t flush_buffer_bytes() { return buffer().size() * sizeof(uint64_t); }

void flush_caches() {
  // On every core, each reading its share: a read on one core alone would leave the other cores'
  // private L2 caches holding what they touched last, and their share of the next iteration warm.
  const auto& b = buffer();
  const int workers = core_count();
  timed_on_all_cores(workers, [&](int w) {
    const Range r = share(b.size(), w, workers, 8);
    uint64_t sum = 0;
    for (size_t i = r.begin; i < r.end; i += 8) sum += b[i];  // one load per 64-byte line
    benchmark::DoNotOptimize(sum);
  });
}

void before_timed_call(Backend& b, bool warm_cache) {
  if (!warm_cache && !b.evict_device_caches()) {
    b.park_host_threads();
    flush_caches();
  }
  b.wake_host_threads();
}

}  // namespace ts::bench
