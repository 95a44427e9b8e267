#include "python/arrays.h"

#include <vector>

#include "core/error.h"

namespace py = pybind11;

namespace ts::python {

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::F32: return py::dtype("float32");
    case DType::F16: return py::dtype("float16");
    case DType::BF16: return py::dtype("uint16");  // bit patterns: NumPy has no bfloat16
    case DType::F64: return py::dtype("float64");
    case DType::I32: return py::dtype("int32");
    case DType::U32: return py::dtype("uint32");
    case DType::I8: return py::dtype("int8");
    case DType::U8: return py::dtype("uint8");
    case DType::F8_E4M3: return py::dtype("uint8");  // bytes, as the case file holds them
    case DType::I64: return py::dtype("int64");
  }
  return py::dtype("uint8");
}

py::array array_of(const Tensor& t, py::handle owner, bool writable) {
  const std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  // With a base object NumPy neither copies nor frees the memory; the base keeps it alive.
  py::array a(numpy_dtype(t.dtype()), shape, std::vector<py::ssize_t>{}, t.data(), owner);
  if (!writable) a.attr("setflags")(py::arg("write") = false);
  return a;
}

py::array array_for(const std::string& name, py::handle obj) {
  check(py::isinstance<py::array>(obj), "output '{}' is a {}, not an array (NumPy arrays, torch tensors or anything "
        "with __dlpack__ or the buffer protocol)", name, std::string(py::str(obj.get_type().attr("__name__"))));
  auto a = py::reinterpret_borrow<py::array>(obj);
  check(a.flags() & py::array::c_style, "output '{}' is not C-contiguous (touchstone.judge copies such arrays; "
        "the native judge compares memory in place)", name);
  check(a.dtype().attr("isnative").cast<bool>(), "output '{}' is not in native byte order", name);
  return a;
}

TensorView view_of(const std::string& name, const py::array& a, std::optional<DType> declared) {
  const char kind = a.dtype().kind();
  const auto size = a.itemsize();
  std::optional<DType> t;
  if (kind == 'f') t = size == 4 ? DType::F32 : size == 2 ? DType::F16 : size == 8 ? DType::F64 : std::optional<DType>{};
  if (kind == 'i') t = size == 4 ? DType::I32 : size == 1 ? DType::I8 : size == 8 ? DType::I64 : std::optional<DType>{};
  if (kind == 'u') {
    if (size == 2) t = DType::BF16;  // the only 16-bit integer a tensor holds: bfloat16's bits
    if (size == 4) t = DType::U32;
    if (size == 1) t = declared == DType::F8_E4M3 ? DType::F8_E4M3 : DType::U8;
  }
  check(t.has_value(), "output '{}' has NumPy dtype {}, which no tensor has (float32, float16, uint16 for BF16's "
        "bits, float64, int32, uint32, int8, uint8, int64)", name, std::string(py::str(a.dtype())));
  Shape shape(a.shape(), a.shape() + a.ndim());
  return {*t, std::move(shape), static_cast<const std::byte*>(a.data())};
}

}  // namespace ts::python
