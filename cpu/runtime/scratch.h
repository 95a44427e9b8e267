#pragma once
// Scratch memory of the cpu kernels (their F32 copies of rows, task lists, per-row lengths). A kernel
// run again on the same shapes (a benchmark's iterations, a captured decode step replayed) asks for
// the same blocks again: each thread keeps the blocks it gave back, by size, and hands them out again,
// so a repeated call allocates nothing. Blocks above kMaxPooledBlock, or past kMaxPooledBytes kept per
// thread, go back to the heap as usual.
#include <cstddef>
#include <vector>

#include "core/tensor.h"

namespace ts::cpu {

inline constexpr size_t kMaxPooledBlock = size_t{64} << 20, kMaxPooledBytes = size_t{256} << 20;

void* scratch_take(size_t bytes);
void scratch_give(void* p, size_t bytes) noexcept;

template <class T> struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() = default;
  template <class U> ScratchAllocator(const ScratchAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(scratch_take(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { scratch_give(p, n * sizeof(T)); }
  template <class U> bool operator==(const ScratchAllocator<U>&) const { return true; }
};

template <class T> using ScratchVector = std::vector<T, ScratchAllocator<T>>;

// A U32 / I32 index tensor's values as int64s (paged::values, in scratch).
ScratchVector<int64_t> values(const Tensor& t);

}  // namespace ts::cpu
