#include "core/tensor.h"

#include <algorithm>
#include <cstring>
#include <new>

#include <sys/mman.h>

#include <fmt/format.h>

#include "core/checked.h"
#include "core/error.h"

namespace ts {

namespace {
constexpr size_t kHugePage = 2u << 20;
size_t alignment_for(size_t bytes) { return bytes >= kHugePage ? kHugePage : 64; }
}  // namespace

void* allocate_tensor_memory(size_t bytes) {
  const size_t align = alignment_for(bytes);
  void* p = ::operator new(bytes, std::align_val_t{align});
  // Fewer TLB misses on streaming kernels; harmless where THP is off ("never").
  if (align == kHugePage) madvise(p, (bytes + kHugePage - 1) / kHugePage * kHugePage, MADV_HUGEPAGE);
  return p;
}

void free_tensor_memory(void* p, size_t bytes) { ::operator delete(p, std::align_val_t{alignment_for(bytes)}); }

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ",")); }

int64_t shape_numel(const Shape& s) {
  for (int64_t d : s) check(d >= 0, "negative dimension in shape {}", shape_str(s));
  try {
    return checked::numel(s);
  } catch (const Error&) {
    fail("shape {} is too large (more than 2^40 elements)", shape_str(s));
  }
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = shape_numel(shape_);
  if (numel_ == 0) return;  // the shared guard block (empty_storage)
  storage_.assign(nbytes() + 2 * kGuardBytes, std::byte{kGuardByte});
  std::memset(data(), 0, nbytes());
}

std::byte* Tensor::empty_storage() {
  alignas(64) static std::byte block[2 * kGuardBytes];
  static const bool filled = (std::memset(block, kGuardByte, sizeof block), true);
  (void)filled;
  return block;
}

bool Tensor::guards_intact() const {
  auto ok = [](const std::byte* p, size_t n) {
    return std::all_of(p, p + n, [](std::byte b) { return b == std::byte{kGuardByte}; });
  };
  return ok(storage(), kGuardBytes) && ok(data() + nbytes(), kGuardBytes);
}

double element_f64(DType t, const std::byte* data, int64_t i) {
  const auto at = [&](auto zero) { return reinterpret_cast<const decltype(zero)*>(data)[i]; };
  switch (t) {
    case DType::F32: return at(float{});
    case DType::F16: return f16_to_f32(at(uint16_t{}));
    case DType::BF16: return bf16_to_f32(at(uint16_t{}));
    case DType::F64: return at(double{});
    case DType::F8_E4M3: return f8e4m3_to_f32(at(uint8_t{}));
    case DType::I32: return at(int32_t{});
    case DType::U32: return at(uint32_t{});
    case DType::I8: return at(int8_t{});
    case DType::U8: return at(uint8_t{});
    case DType::I64: return static_cast<double>(at(int64_t{}));
  }
  return 0;
}

double Tensor::get(int64_t i) const { return element_f64(dtype_, data(), i); }

ViewMap views(const TensorMap& m) {
  ViewMap v;
  for (const auto& [name, t] : m) v.emplace(name, t.view());
  return v;
}

void Tensor::set(int64_t i, double v) {
  switch (dtype_) {
    case DType::F32: as<float>()[i] = static_cast<float>(v); break;
    case DType::F16: as<uint16_t>()[i] = f32_to_f16(static_cast<float>(v)); break;
    case DType::BF16: as<uint16_t>()[i] = f32_to_bf16(static_cast<float>(v)); break;
    case DType::F64: as<double>()[i] = v; break;
    case DType::F8_E4M3: as<uint8_t>()[i] = f32_to_f8e4m3(static_cast<float>(v)); break;
    case DType::I32: as<int32_t>()[i] = static_cast<int32_t>(v); break;
    case DType::U32: as<uint32_t>()[i] = static_cast<uint32_t>(v); break;
    case DType::I8: as<int8_t>()[i] = static_cast<int8_t>(v); break;
    case DType::U8: as<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    case DType::I64: as<int64_t>()[i] = static_cast<int64_t>(v); break;
  }
}

void Tensor::fill(double v) {
  if (numel_ == 0) return;
  // One element converted, then its bytes doubled across the rest: every output is poisoned this way
  // (a 64 MB output in milliseconds, not an element at a time).
  set(0, v);
  const size_t esz = dtype_size(dtype_), total = nbytes();
  for (size_t done = esz; done < total; done *= 2) std::memcpy(data() + done, data(), std::min(done, total - done));
}

std::vector<double> to_f64(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get(i);
  return v;
}

void from_f64(Tensor& t, const std::vector<double>& v) {
  check(static_cast<int64_t>(v.size()) == t.numel(), "from_f64: {} values for {} elements", v.size(),
        t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v[static_cast<size_t>(i)]);
}

std::vector<int64_t> to_indices(const Tensor& t) {
  check(t.dtype() == DType::I32 || t.dtype() == DType::U32, "index tensor must be I32 or U32, is {}",
        dtype_name(t.dtype()));
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i)
    v[static_cast<size_t>(i)] =
        t.dtype() == DType::I32 ? int64_t{t.as<int32_t>()[i]} : int64_t{t.as<uint32_t>()[i]};
  return v;
}

}  // namespace ts
