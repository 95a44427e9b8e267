// libFuzzer's start-up hook, shared by every fuzz entry (and called by corpus_replay.cpp): a fuzzed
// header may declare gigabytes or millions of values; the memory budget keeps one input's cost to
// what the fuzzer can pay.
#include <cstdlib>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TOUCHSTONE_MEMORY_BUDGET", "256M", 0);
  return 0;
}
