#pragma once
// Google Benchmark calls a benchmark's function several times (probing the iteration count, then
// once per repetition). The expensive setup (generated inputs, uploads, warm-up) is kept in one slot
// across those calls and freed when another benchmark starts, so one benchmark's buffers are alive at
// a time.
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include <benchmark/benchmark.h>

namespace ts::bench {

struct Setup {
  virtual ~Setup() = default;
};

Setup* find_setup(const std::string& key);
void keep_setup(const std::string& key, std::unique_ptr<Setup> s);
// Frees the slot. main() calls it before exit: a launch must die before the backend registry does.
void release_setup();

// The setup kept for `key`, or make() (returning std::unique_ptr<T>, T derived from Setup) after
// freeing the previous one.
template <class T, class Make> T& setup_once(const std::string& key, Make&& make) {
  if (Setup* s = find_setup(key)) return static_cast<T&>(*s);
  release_setup();
  std::unique_ptr<T> made = make();
  T& ref = *made;
  keep_setup(key, std::move(made));
  return ref;
}

// setup_once inside a benchmark function: where make() throws, the benchmark is marked failed with
// "setup failed: <why>" (Google Benchmark goes on with the next one) and nullptr returned.
template <class T, class Make> T* setup_or_skip(benchmark::State& state, const std::string& key, Make&& make) {
  try {
    return &setup_once<T>(key, std::forward<Make>(make));
  } catch (const std::bad_alloc&) {
    state.SkipWithError(("setup failed: out of memory for " + key).c_str());
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("setup failed: ") + e.what()).c_str());
  }
  return nullptr;
}

}  // namespace ts::bench
