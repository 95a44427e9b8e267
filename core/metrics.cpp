#include "core/metrics.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace ts {

std::string ErrorReport::summary() const {
  std::string s = fmt::format("max_abs={:.3g} max_rel={:.3g} nmse={:.3g} bad={}/{}", max_abs, max_rel,
                              nmse, bad, count);
  if (nonfinite_mismatch) s += fmt::format(" nonfinite_mismatch={}", nonfinite_mismatch);
  if (worst >= 0) s += fmt::format(" worst[{}]: got {:.9g} want {:.9g}", worst, worst_got, worst_want);
  return s;
}

ErrorReport compare(const Tensor& want, const Tensor& got, const Tolerance& tol) {
  check(want.dtype() == got.dtype(), "dtype mismatch: want {} got {}", dtype_name(want.dtype()),
        dtype_name(got.dtype()));
  check(want.shape() == got.shape(), "shape mismatch: want {} got {}", shape_str(want.shape()),
        shape_str(got.shape()));
  ErrorReport r;
  r.count = want.numel();
  const size_t esz = dtype_size(want.dtype());
  double sq_err = 0, sq_ref = 0, worst_excess = -1;
  for (int64_t i = 0; i < r.count; ++i) {
    const double w = want.get(i), g = got.get(i);
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
      if (tol.exact() || !is_float(want.dtype())) {
        ok = std::memcmp(want.data() + i * esz, got.data() + i * esz, esz) == 0;
      } else {
        ok = d <= tol.atol + tol.rtol * std::fabs(w);
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
  return r;
}

}  // namespace ts
