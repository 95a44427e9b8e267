#pragma once
// Evicts the caches between timed iterations, so a memory-bound preset whose tensors fit in the
// last-level cache (rms_norm t512_d4096 moves 16 MiB; this machine's L3 holds 32) is measured from
// memory, as in a real model where the previous layer's weights pushed it out. Reads, never writes:
// dirty lines would be written back inside the next timed region.
#include <cstddef>

namespace ts {
class Backend;
}

namespace ts::bench {

void flush_caches();          // all cores read a buffer of twice the last-level cache (at least 64 MiB)
size_t flush_buffer_bytes();

// Before each timed call on b, outside the timed region: unless warm_cache, b's device caches evicted,
// or, for a backend on the host's memory, the host's (b's host threads parked meanwhile); then b's
// host threads woken (Backend::wake_host_threads), as a decode loop keeps them.
void before_timed_call(Backend& b, bool warm_cache);

}  // namespace ts::bench
