#include "core/ops/magnitude.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/quant/formats.h"

namespace ts::magnitude {

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = std::fabs(t.get(i));
    if (std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

const Tensor& input(const TensorMap& in, const std::string& name) {
  const auto it = in.find(name);
  check(it != in.end(), "tolerance: the case has no input '{}' to take its magnitude from", name);
  return it->second;
}

namespace {
// The largest f(tensor) over input `name`, or over the list `name.0`, `name.1`, ...
template <class F> double over_inputs(const TensorMap& in, const std::string& name, F f) {
  if (const auto it = in.find(name); it != in.end()) return f(it->second);
  double m = 0;
  int64_t i = 0;
  for (;; ++i) {
    const auto it = in.find(fmt::format("{}.{}", name, i));
    if (it == in.end()) break;
    m = std::max(m, f(it->second));
  }
  check(i > 0, "tolerance: the case has no input '{}' to take its magnitude from", name);
  return m;
}
}  // namespace

double max_abs(const TensorMap& in, const std::string& name) {
  return over_inputs(in, name, [](const Tensor& t) { return max_abs(t); });
}

double max_abs_gguf(const Tensor& bytes, QuantKind k, int64_t n_cols) {
  const quant::Format& f = quant::block_format(k);
  const int64_t row_bytes = quant::row_bytes(f, n_cols);
  if (row_bytes <= 0) return 0;
  const int64_t rows = static_cast<int64_t>(bytes.nbytes()) / row_bytes;
  std::vector<float> w(static_cast<size_t>(n_cols));
  double m = 0;
  for (int64_t r = 0; r < rows; ++r) {
    f.dequantize_row(bytes.as<uint8_t>() + r * row_bytes, w.data(), n_cols);
    for (float v : w)
      if (std::isfinite(v)) m = std::max(m, std::fabs(static_cast<double>(v)));
  }
  return m;
}

double max_row_norm(const Tensor& t, int64_t len) {
  if (len <= 0) return 0;
  double m = 0;
  for (int64_t r = 0; r + len <= t.numel(); r += len) {
    double s = 0;
    for (int64_t i = 0; i < len; ++i) s += t.get(r + i) * t.get(r + i);
    if (std::isfinite(s)) m = std::max(m, std::sqrt(s));
  }
  return m;
}

double max_row_norm(const TensorMap& in, const std::string& name, int64_t len) {
  return over_inputs(in, name, [len](const Tensor& t) { return max_row_norm(t, len); });
}

std::string str(double v) { return fmt::format("{:.3g}", v); }

}  // namespace ts::magnitude
