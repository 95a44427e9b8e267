#pragma once
// Shared by the cpu kernels: dtype dispatch onto element types, and tensor access by name.
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "core/tensor.h"
#include "hwy/base.h"

namespace ts::cpu {

template <class T> struct TypeTag { using type = T; };

// Calls f(TypeTag<T>{}) with the element type of a float dtype: one kernel template serves F32, F16
// and BF16 (Highway's lane types, layout-identical to the tensors' 16-bit words).
template <class F> decltype(auto) visit_float(DType dt, F&& f) {
  switch (dt) {
    case DType::F32: return f(TypeTag<float>{});
    case DType::F16: return f(TypeTag<hwy::float16_t>{});
    case DType::BF16: return f(TypeTag<hwy::bfloat16_t>{});
    default: fail("cpu backend: unsupported tensor dtype {}", dtype_name(dt));
  }
}

inline Tensor& tensor(TensorMap& t, const std::string& name) {
  auto it = t.find(name);
  check(it != t.end(), "cpu backend: missing tensor '{}'", name);
  return it->second;
}

}  // namespace ts::cpu
