#pragma once
// Tensors as NumPy arrays and back, without copies. F16 is NumPy's float16; BF16 has no NumPy type
// and travels as its uint16 bit patterns (as do F8_E4M3's bytes as uint8).
#include <optional>
#include <string>

#include <pybind11/numpy.h>

#include "core/tensor.h"

namespace ts::python {

// The NumPy dtype a tensor of `t` is seen as.
pybind11::dtype numpy_dtype(DType t);

// A view of `t`'s elements that keeps `owner` (what owns `t`) alive; read-only unless `writable`.
pybind11::array array_of(const Tensor& t, pybind11::handle owner, bool writable);

// `obj` as a C-contiguous NumPy array in native byte order, or an Error naming `name`. The package's
// Python half has already turned DLPack and torch tensors into arrays (without a copy).
pybind11::array array_for(const std::string& name, pybind11::handle obj);

// The tensor view of an array: its own memory, its dtype read as `declared` where the bits are
// ambiguous (uint8 is U8 or F8_E4M3's bytes). An Error for a dtype no tensor has.
TensorView view_of(const std::string& name, const pybind11::array& a, std::optional<DType> declared);

}  // namespace ts::python
