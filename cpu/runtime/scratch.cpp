#include "cpu/runtime/scratch.h"

#include <new>
#include <unordered_map>

namespace ts::cpu {

namespace {
// One thread's kept blocks: size -> blocks of that size. Blocks are the heap's (operator new), so a
// block given back on another thread than the one that took it is kept there, which is harmless.
struct Pool {
  std::unordered_map<size_t, std::vector<void*>> free;
  size_t kept = 0;
  ~Pool();
};
// Set when this thread's pool is destroyed (thread exit): a thread_local destroyed after it (a kernel's
// thread_local activations, constructed before the pool was first used) still gives its blocks back,
// straight to the heap. A bool needs no destructor, so it outlives every thread_local object.
thread_local bool t_pool_gone = false;
thread_local Pool t_pool;

Pool::~Pool() {
  t_pool_gone = true;
  for (auto& [bytes, blocks] : free)
    for (void* p : blocks) ::operator delete(p, std::align_val_t{64});
}
}  // namespace

ScratchVector<int64_t> values(const Tensor& t) {
  ScratchVector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[static_cast<size_t>(i)] = t.dtype() == DType::I32 ? int64_t{t.as<int32_t>()[i]} : int64_t{t.as<uint32_t>()[i]};
  return v;
}

void* scratch_take(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (t_pool_gone) return ::operator new(bytes, std::align_val_t{64});
  if (auto it = t_pool.free.find(bytes); it != t_pool.free.end() && !it->second.empty()) {
    void* p = it->second.back();
    it->second.pop_back();
    t_pool.kept -= bytes;
    return p;
  }
  return ::operator new(bytes, std::align_val_t{64});
}

void scratch_give(void* p, size_t bytes) noexcept {
  if (!p) return;
  if (bytes == 0) bytes = 1;
  if (!t_pool_gone && bytes <= kMaxPooledBlock && t_pool.kept + bytes <= kMaxPooledBytes) {
    try {
      t_pool.free[bytes].push_back(p);  // allocates only the first time a size comes back
      t_pool.kept += bytes;
      return;
    } catch (const std::bad_alloc&) {
    }
  }
  ::operator delete(p, std::align_val_t{64});
}

}  // namespace ts::cpu
