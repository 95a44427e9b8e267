#pragma once
// A persistent pool of worker threads (created once per process, never per call). Work is cut into
// tasks by a fixed rule that does not depend on timing; threads then claim tasks as they come free,
// so a late-waking worker costs its share of the tasks, not the whole call. A kernel whose tasks each
// write their own outputs gives bit-identical results run after run.
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace ts::cpu {

// A callable borrowed for the length of a call: what run() and parallel_for() take, so that handing
// them a lambda never allocates (a std::function holding a lambda of more than two references does),
// and a captured decode step replays with no allocation at all.
template <class Sig> class FnRef;
template <class R, class... A> class FnRef<R(A...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FnRef>)
  FnRef(F&& f) : obj_(const_cast<void*>(static_cast<const void*>(&f))),  // NOLINT: implicit, as std::function
                 call_([](void* o, A... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...); }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

class ThreadPool {
 public:
  static ThreadPool& instance();  // one thread per hardware thread, the caller included
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(task) for every task in [0, n), each claimed by the next free thread, in increasing
  // order. Returns when all are done.
  // A call from inside a task (or while another caller holds the pool) runs serially on the caller.
  void run(int64_t n, FnRef<void(int64_t)> fn);
  // Idle workers stop spinning and sleep until the next run(): before a call into a library with
  // threads of its own (OpenBLAS), which a spinning worker would take a core from.
  void park() { parked_.store(true, std::memory_order_relaxed); }
  // Returns once every worker is awake (an empty job that each of them has seen); they then spin
  // for the next run() as after any job. A worker woken from its sleep by a run() starts ~0.1 ms
  // late on a 2-vCPU VM (2026-11-27): the caller then runs the first tenth of a 1 ms decode alone.
  void wake();

 private:
  void worker();
  void run_share();

  std::vector<std::thread> workers_;
  std::mutex busy_;                      // one caller at a time
  std::atomic<uint32_t> generation_{0};  // bumped per job: wakes the workers
  std::atomic<int> pending_{0};          // workers still running the current job
  std::atomic<int64_t> next_{0};         // next unclaimed task of the current job
  std::atomic<bool> stop_{false};
  std::atomic<bool> parked_{false};
  int64_t n_ = 0;
  const FnRef<void(int64_t)>* fn_ = nullptr;
};

// Splits [0, n) into at most size() contiguous chunks, at least `grain` items each, and runs
// fn(begin, end) on each in parallel. Small ranges run on the caller alone.
void parallel_for(int64_t n, int64_t grain, FnRef<void(int64_t, int64_t)> fn);

// ThreadPool::instance().park(): before cblas_sgemm and the like.
void park_workers();
// ThreadPool::instance().wake(): the workers running before a call that should not wait for them.
void wake_workers();

// Runs fn(i) for i in [0, n) in parallel, tasks claimed one at a time (evens out tasks of unequal
// cost, such as causal attention blocks, and workers that wake late).
void parallel_tasks(int64_t n, FnRef<void(int64_t)> fn);

}  // namespace ts::cpu
