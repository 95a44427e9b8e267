#pragma once
// Evicts the caches between timed iterations, so a memory-bound preset whose tensors fit in the
// last-level cache (rms_norm t512_d4096 moves 16 MiB; this machine's L3 holds 32) is measured from
// memory, as in a real model where the previous layer's weights pushed it out. Reads, never writes:
// dirty lines would be written back inside the next timed region.
#include <cstddef>

namespace ts::bench {

void flush_caches();          // all cores read a buffer of twice the last-level cache (at least 64 MiB)
size_t flush_buffer_bytes();

}  // namespace ts::bench
