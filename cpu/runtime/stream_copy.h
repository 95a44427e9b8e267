#pragma once
// Copies that bypass the cache, for large outputs of data-movement ops: a cached store first reads
// the destination line (write-allocate) only to overwrite it, a third more memory traffic.
#include <cstddef>

namespace ts::cpu {

// Outputs of at least this many bytes go out with streaming stores (copies, norms, rope): they will
// not stay in cache for the next op anyway.
constexpr size_t kStreamOutputBytes = size_t{4} << 20;

// dst[0, n) = src[0, n) (not overlapping), the vector-aligned middle of dst with streaming stores.
// Weakly ordered: fence (std::atomic_thread_fence, seq_cst) before the data is read elsewhere.
void stream_copy(void* dst, const void* src, size_t n);

}  // namespace ts::cpu
