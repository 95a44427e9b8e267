// The cpu backend's thread pool (cpu/runtime/thread_pool.h): every task of a job runs exactly once,
// whether the workers were spinning, asleep (park) or just woken (wake, which touchstone-bench calls
// after each cold-cache eviction); wake returns on a pool without workers, and again and again.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
namespace {

// Runs n tasks on the pool and checks that each ran once.
void ExpectEveryTaskOnce(ThreadPool& pool, int64_t n) {
  std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
  pool.run(n, [&](int64_t t) { runs[static_cast<size_t>(t)].fetch_add(1, std::memory_order_relaxed); });
  for (int64_t t = 0; t < n; ++t) ASSERT_EQ(runs[static_cast<size_t>(t)].load(), 1) << "task " << t << " of " << n;
}

TEST(CpuThreadPool, WakeReturnsAndJobsRunEveryTaskOnce) {
  ThreadPool pool(3);
  ExpectEveryTaskOnce(pool, 100);
  pool.wake();
  ExpectEveryTaskOnce(pool, 7);
  pool.park();
  pool.wake();  // from sleep: returns once both workers have seen its job
  ExpectEveryTaskOnce(pool, 1000);
  pool.park();
  ExpectEveryTaskOnce(pool, 3);  // a job wakes parked workers by itself too
  for (int i = 0; i < 50; ++i) pool.wake();
  ExpectEveryTaskOnce(pool, 2);
}

TEST(CpuThreadPool, WakeWithoutWorkers) {
  ThreadPool pool(1);
  pool.wake();
  pool.park();
  pool.wake();
  ExpectEveryTaskOnce(pool, 5);
}

}  // namespace
}  // namespace ts::cpu
