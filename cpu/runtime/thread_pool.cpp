#include "cpu/runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <sched.h>

namespace ts::cpu {

namespace {
thread_local bool t_in_pool = false;  // set inside tasks: nested calls run serially

// How long an idle worker spins before it sleeps: TOUCHSTONE_CPU_SPIN_US microseconds (default 50).
// Back-to-back kernels then skip the futex wake-up latency. touchstone-bench raises it, so that the
// workers it wakes after each cold-cache flush (wake_workers) are still spinning when the timed call
// starts, as they are in an inference engine's decode loop, where one kernel follows another; the
// tests keep the short default, so idle workers do not take the cores from the other tests running
// beside them.
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds t = [] {
    const char* e = std::getenv("TOUCHSTONE_CPU_SPIN_US");
    const long v = e ? std::strtol(e, nullptr, 10) : 50;
    return std::chrono::microseconds(std::clamp<long>(v, 0, 1000000));
  }();
  return t;
}

// Step i of a spin: a pause, and every 64 steps a yield. Where a core has more runnable threads than
// one (2 pool threads pinned to one core, or another process's work beside them), a spinner that
// never yields holds the core until the scheduler's time slice ends, while the thread it waits for
// is the one that needs it: every call then took ~8 ms (a 170 us decode, `taskset -c 0`). On an
// idle core the yield returns at once.
void spin_step(int i) {
  if (i % 64 == 63) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

template <class Pred>
void spin_then_wait(std::atomic<uint32_t>& a, uint32_t old, const std::atomic<bool>& parked, Pred done) {
  const auto until = std::chrono::steady_clock::now() + spin_time();
  for (int i = 0;; ++i) {
    if (done()) return;
    if (i % 64 == 63 && (parked.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= until)) break;
    spin_step(i);
  }
  while (!done()) a.wait(old, std::memory_order_acquire);
}
}  // namespace

ThreadPool& ThreadPool::instance() {
  static ThreadPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return pool;
}

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_share() {
  for (int64_t t; (t = next_.fetch_add(1, std::memory_order_relaxed)) < n_;) (*fn_)(t);
}

void ThreadPool::worker() {
  t_in_pool = true;
  uint32_t seen = 0;
  for (;;) {
    spin_then_wait(generation_, seen, parked_, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    run_share();
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      pending_.notify_all();
    }
  }
}

void ThreadPool::run(int64_t n, FnRef<void(int64_t)> fn) {
  if (n <= 0) return;
  std::unique_lock lock(busy_, std::try_to_lock);
  if (t_in_pool || !lock.owns_lock() || workers_.empty() || n == 1) {
    for (int64_t t = 0; t < n; ++t) fn(t);
    return;
  }
  parked_.store(false, std::memory_order_relaxed);
  n_ = n;
  fn_ = &fn;
  next_.store(0, std::memory_order_relaxed);
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  t_in_pool = true;
  run_share();
  t_in_pool = false;
  for (int i = 0; i < 100000 && pending_.load(std::memory_order_acquire) != 0; ++i) {
    spin_step(i);
  }
  for (int p; (p = pending_.load(std::memory_order_acquire)) != 0;) pending_.wait(p, std::memory_order_acquire);
  fn_ = nullptr;
}

void parallel_for(int64_t n, int64_t grain, FnRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  ThreadPool& pool = ThreadPool::instance();
  const int64_t chunks = std::clamp<int64_t>(n / std::max<int64_t>(grain, 1), 1, pool.size());
  if (chunks == 1) return fn(0, n);
  auto chunk = [&](int64_t c) { fn(n * c / chunks, n * (c + 1) / chunks); };
  pool.run(chunks, chunk);
}

void ThreadPool::wake() {
  // Two tasks at least (one runs serially), none with work: run() returns when every worker has
  // claimed what was left of them, which it does only once awake.
  run(std::max(size(), 2), [](int64_t) {});
}

void park_workers() { ThreadPool::instance().park(); }

void wake_workers() { ThreadPool::instance().wake(); }

void parallel_tasks(int64_t n, FnRef<void(int64_t)> fn) { ThreadPool::instance().run(n, fn); }

}  // namespace ts::cpu
