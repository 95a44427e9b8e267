#pragma once
// Host tensors. The storage of every tensor is surrounded by guard zones filled with a fixed byte
// pattern; a kernel that writes past either end of its output is caught by guards_intact(). Backends
// that copy a tensor to a device copy the guards along with it and bind the data at offset
// kGuardBytes (a multiple of every device's buffer offset alignment), so the check covers them too.
#include <cstddef>
#include <cstdint>
#include <map>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace ts {

using Shape = std::vector<int64_t>;

// Host memory for tensors (and the benchmarks' baselines, so both sides are measured alike):
// cache-line aligned, so the data (kGuardBytes past the start) is too; large blocks are 2 MiB
// aligned and advised for transparent huge pages, as an engine's weights and KV cache would be.
void* allocate_tensor_memory(size_t bytes);
void free_tensor_memory(void* p, size_t bytes);

template <class T> struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U> CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_tensor_memory(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { free_tensor_memory(p, n * sizeof(T)); }
  template <class U> bool operator==(const CacheLineAllocator<U>&) const { return true; }
};

std::string shape_str(const Shape& s);  // "[2,3,4]"
int64_t shape_numel(const Shape& s);

// Element i of `data` holding dtype `t`, as a double (float dtypes through F32, F64 as it is).
double element_f64(DType t, const std::byte* data, int64_t i);

// A read-only look at elements that live elsewhere: a Tensor's, or an array handed in from Python. The
// judge compares views, so outputs produced outside the harness are compared where they lie, uncopied.
struct TensorView {
  DType dtype = DType::F32;
  Shape shape;
  const std::byte* data = nullptr;
  int64_t numel() const { return shape_numel(shape); }
  double get(int64_t i) const { return element_f64(dtype, data, i); }
};

inline constexpr size_t kGuardBytes = 4096;
inline constexpr uint8_t kGuardByte = 0xA5;

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled data, guards set

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  std::byte* data() { return storage() + kGuardBytes; }
  const std::byte* data() const { return storage() + kGuardBytes; }
  template <class T> T* as() { return reinterpret_cast<T*>(data()); }
  template <class T> const T* as() const { return reinterpret_cast<const T*>(data()); }
  std::span<const std::byte> bytes() const { return {data(), nbytes()}; }

  // The whole allocation: guard, data, guard. Device backends upload and download this.
  // A tensor with no elements owns no memory: its storage is one guard block shared by every
  // zero-size tensor, so a file declaring a million of them costs a million map entries, no more.
  std::byte* storage() { return numel_ ? storage_.data() : empty_storage(); }
  const std::byte* storage() const { return numel_ ? storage_.data() : empty_storage(); }
  size_t storage_bytes() const { return numel_ ? storage_.size() : 2 * kGuardBytes; }

  bool guards_intact() const;
  TensorView view() const { return {dtype_, shape_, data()}; }
  // Element access for float dtypes, converting through F32 (F64 through double).
  double get(int64_t i) const;
  void set(int64_t i, double v);  // rounds to nearest even into the dtype
  void fill(double v);            // every element

 private:
  DType dtype_ = DType::F32;
  Shape shape_;
  int64_t numel_ = 0;
  std::vector<std::byte, CacheLineAllocator<std::byte>> storage_;
  static std::byte* empty_storage();
};

using TensorMap = std::map<std::string, Tensor>;
using ViewMap = std::map<std::string, TensorView>;
ViewMap views(const TensorMap& m);

// Reads every element of a float tensor into doubles / writes them back with rounding.
std::vector<double> to_f64(const Tensor& t);
void from_f64(Tensor& t, const std::vector<double>& v);
// Integer index tensors (I32 / U32) as int64.
std::vector<int64_t> to_indices(const Tensor& t);

}  // namespace ts
