#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace ts {

std::string ErrorReport::summary() const {
  std::string s = fmt::format("max_abs={:.3g} max_rel={:.3g} nmse={:.3g} bad={}/{}", max_abs, max_rel,
                              nmse, bad, count);
  if (skipped) s += fmt::format(" not_compared={}", skipped);
  if (nmse_exceeded) s += " NMSE_ABOVE_BOUND";
  if (nonfinite_mismatch) s += fmt::format(" nonfinite_mismatch={}", nonfinite_mismatch);
  if (worst >= 0) s += fmt::format(" worst[{}]: got {:.9g} want {:.9g}", worst, worst_got, worst_want);
  return s;
}

std::string Tolerance::str() const {
  if (metric == Metric::Nmse) return fmt::format("nmse<={:.3g} ({})", max_nmse, why);
  return fmt::format("atol={:.3g} rtol={:.3g} ({})", atol, rtol, why);
}

namespace {

// The comparison loop for one dtype: `load` reads element i of a tensor's bytes as a double, inlined,
// so the loop does no per-element dispatch (a 16M-element output is judged in tens of ms).
template <class Load>
void compare_elements(const TensorView& want, const TensorView& got, const Tolerance& tol,
                      const std::vector<uint8_t>& compared, Load load, ErrorReport& r) {
  const int64_t numel = want.numel();
  const size_t esz = dtype_size(want.dtype);
  const bool elementwise = tol.metric == Metric::Allclose;
  const bool bitwise = tol.exact() || !is_float(want.dtype);
  double sq_err = 0, sq_ref = 0, worst_excess = -1;
  for (int64_t i = 0; i < numel; ++i) {
    if (!compared.empty() && !compared[static_cast<size_t>(i)]) {
      ++r.skipped;
      continue;
    }
    ++r.count;
    const double w = load(want.data, i), g = load(got.data, i);
    bool ok;
    if (!std::isfinite(w) || !std::isfinite(g)) {
      ok = (std::isnan(w) && std::isnan(g)) || w == g;
      if (!ok) ++r.nonfinite_mismatch;
    } else {
      const double d = std::fabs(g - w);
      r.max_abs = std::max(r.max_abs, d);
      if (w != 0) r.max_rel = std::max(r.max_rel, d / std::fabs(w));
      sq_err += d * d;
      sq_ref += w * w;
      if (bitwise) {
        ok = std::memcmp(want.data + i * esz, got.data + i * esz, esz) == 0;
      } else {
        ok = !elementwise || d <= tol.atol + tol.rtol * std::fabs(w);
      }
      const double excess = d - (tol.atol + tol.rtol * std::fabs(w));
      if (!ok && excess > worst_excess) {
        worst_excess = excess;
        r.worst = i;
        r.worst_got = g;
        r.worst_want = w;
      }
    }
    if (!ok) {
      ++r.bad;
      if (r.worst < 0) { r.worst = i; r.worst_got = g; r.worst_want = w; }
    }
  }
  r.nmse = sq_ref > 0 ? sq_err / sq_ref : (sq_err > 0 ? INFINITY : 0);
  if (!elementwise && is_float(want.dtype) && r.nmse > tol.max_nmse) r.nmse_exceeded = true;
}

template <class T> T raw(const std::byte* p, int64_t i) { return reinterpret_cast<const T*>(p)[i]; }
template <class T> double load_as(const std::byte* p, int64_t i) { return static_cast<double>(raw<T>(p, i)); }

}  // namespace

ErrorReport compare(const TensorView& want, const TensorView& got, const Tolerance& tol,
                    const std::vector<uint8_t>& compared) {
  check(want.dtype == got.dtype, "dtype mismatch: want {} got {}", dtype_name(want.dtype), dtype_name(got.dtype));
  check(want.shape == got.shape, "shape mismatch: want {} got {}", shape_str(want.shape), shape_str(got.shape));
  check(compared.empty() || static_cast<int64_t>(compared.size()) == want.numel(),
        "compare: {} mask flags for {} elements", compared.size(), want.numel());
  ErrorReport r;
  // The common dtypes get a loop of their own; the rest read through element_f64.
  switch (want.dtype) {
    case DType::F32: compare_elements(want, got, tol, compared, load_as<float>, r); break;
    case DType::F64: compare_elements(want, got, tol, compared, load_as<double>, r); break;
    case DType::I32: compare_elements(want, got, tol, compared, load_as<int32_t>, r); break;
    case DType::F16:
      compare_elements(want, got, tol, compared,
                       [](const std::byte* p, int64_t i) { return double(f16_to_f32(raw<uint16_t>(p, i))); }, r);
      break;
    case DType::BF16:
      compare_elements(want, got, tol, compared,
                       [](const std::byte* p, int64_t i) { return double(bf16_to_f32(raw<uint16_t>(p, i))); }, r);
      break;
    default: {
      const DType t = want.dtype;
      compare_elements(want, got, tol, compared, [t](const std::byte* p, int64_t i) { return element_f64(t, p, i); }, r);
    }
  }
  return r;
}

}  // namespace ts
