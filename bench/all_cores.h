#pragma once
// Runs one piece of work on every core at once, for the baselines that measure the whole machine.
#include <cstddef>
#include <functional>

namespace ts::bench {

int core_count();  // hardware threads (at least 1)

// Calls work(worker) on `workers` threads and returns the seconds from a common start (after all
// threads exist) to the last one finishing: thread creation is not part of the measurement.
double timed_on_all_cores(int workers, const std::function<void(int worker)>& work);

// [begin, end) of worker w's share of n items, in chunks of `align` items (cache-line sized chunks
// keep two workers off one line).
struct Range {
  size_t begin, end;
};
Range share(size_t n, int worker, int workers, size_t align);

}  // namespace ts::bench
