#pragma once
// Case generation in parallel: model-sized inputs (a 4096 x 14336 weight) took seconds of one core to
// draw and quantize, which a GPU host's benchmark pass paid before each preset while its device
// waited. Only work whose result does not depend on how it is split goes through here (values drawn
// from a counter-based stream at known offsets, rows quantized independently), so a case's bytes are
// the same on every machine and thread count.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace ts {

// f(begin, end) over [0, n) in contiguous ranges, on up to the machine's cores; in the calling thread
// when n is below 2 * min_per_thread. The first exception a range throws is rethrown here.
template <class F> void parallel_ranges(int64_t n, int64_t min_per_thread, F&& f) {
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t threads = std::min<int64_t>({cores, 64, n / std::max<int64_t>(1, min_per_thread)});
  if (threads < 2) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  const int64_t step = (n + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t b = t * step, e = std::min(n, b + step);
    if (b >= e) break;
    pool.emplace_back([&, t, b, e] {
      try {
        f(b, e);
      } catch (...) {
        errors[static_cast<size_t>(t)] = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ts
