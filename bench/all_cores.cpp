#include "bench/all_cores.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <thread>
#include <vector>

namespace ts::bench {

int core_count() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

double timed_on_all_cores(int workers, const std::function<void(int)>& work) {
  std::barrier sync(workers);
  double seconds = 0;
  auto body = [&](int w) {
    sync.arrive_and_wait();
    const auto t0 = std::chrono::steady_clock::now();
    work(w);
    sync.arrive_and_wait();
    if (w == 0) seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<std::jthread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(body, w);
  body(0);
  return seconds;  // the jthreads join here; worker 0 wrote `seconds` on this thread
}

Range share(size_t n, int worker, int workers, size_t align) {
  const size_t chunks = (n + align - 1) / align;
  const size_t per = chunks / workers, extra = chunks % workers;
  const size_t w = static_cast<size_t>(worker);
  const size_t first = w * per + std::min(w, extra);
  const size_t count = per + (w < extra ? 1 : 0);
  return {std::min(n, first * align), std::min(n, (first + count) * align)};
}

}  // namespace ts::bench
