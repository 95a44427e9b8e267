#pragma once
// Software prefetch of a weight or K/V stream into L2, shared by the memory-bound decode kernels
// (the GGUF and GPTQ / AWQ GEMVs, the attention engine), and into L1 (the KV append).
#include <cstddef>

namespace ts::cpu {

// How far ahead of its reads a kernel streaming from memory asks for its data into L2, for the CPU
// it runs on: the decode GEMVs' weights (cpu/quant/quant_int8_dot-inl.h) and the attention engine's
// affine K/V rows, each stream this many bytes ahead (cpu/attention/attention_rows-inl.h). 8 KiB on
// AMD, 3 KiB elsewhere: on an Intel Xeon with AVX-512 3 KiB was the faster of the two for both kinds
// of kernel, on a Zen 4 8 KiB (the measurements are beside each use). Chosen once, before main, from
// cpuid.
inline constexpr size_t kStreamPrefetchBytesAmd = 8192;
inline constexpr size_t kStreamPrefetchBytesOther = 3072;
inline size_t stream_prefetch_bytes_for_this_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();  // cpuid may not have been read yet when this runs, among the static initializers
  if (__builtin_cpu_is("amd")) return kStreamPrefetchBytesAmd;
#endif
  return kStreamPrefetchBytesOther;
}
inline const size_t kStreamPrefetchBytes = stream_prefetch_bytes_for_this_cpu();

// Asks for every cache line of [p, p + bytes) into L2 (prefetcht1 on x86), not L1: the kernels
// stream each byte once, and on a Zen 4 (2 cores, measured 2026-11-24) L1 prefetches (prefetcht0,
// prefetchnta) kept fewer lines in flight: the GGUF decode GEMVs read 16-30% slower with them, a paged
// F16 decode 1.5x slower. Prefetches never fault, so p may run past the end of a buffer.
inline void prefetch_l2(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off, 0, 2);
  // GCC models a prefetch as free of side effects, so a function that only prefetches counts as
  // pure and its calls are deleted (an early version's prefetching never reached the binary). An empty
  // volatile asm is a side effect: the calls, and so the prefetches, stay.
  asm volatile("");
}

// Asks for every cache line of [p, p + bytes) into L1 (prefetcht0): for data used a few hundred
// cycles later, where an L2 prefetch leaves the load to wait on L2 (kv append's input rows, 4 rows
// ahead: cold I8 prefill append 0.85x the time of prefetcht1, F8 0.89x; 8 alternating rounds).
inline void prefetch_l1(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off, 0, 3);
  asm volatile("");
}

}  // namespace ts::cpu
