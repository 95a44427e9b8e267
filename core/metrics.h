#pragma once
// Comparing a backend's output with the reference's. An element passes when
// |got - want| <= atol + rtol * |want|; NaN / Inf pass only where the reference has the same value.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts {

// How an output is compared. Allclose: every element within atol + rtol*|want| (0 and 0: bit-exact).
// Nmse: the normalised mean squared error of the whole tensor within max_nmse, for outputs whose
// elementwise error has no useful bound (an activation quantized on the fly, say), NaN/Inf still
// matched element by element.
enum class Metric { Allclose, Nmse };

// A tolerance is data on the op, with the derivation that produced it (see core/tolerance.h).
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  std::string why;  // one line: how the bound follows from the op's error analysis
  Metric metric = Metric::Allclose;
  double max_nmse = 0;  // Nmse only
  bool exact() const { return metric == Metric::Allclose && atol == 0 && rtol == 0; }
  std::string str() const;  // "atol=.. rtol=.. (why)" or "nmse<=.. (why)"
};

struct ErrorReport {
  int64_t count = 0;         // elements compared
  int64_t skipped = 0;       // elements the op's definition leaves unwritten (not compared)
  int64_t bad = 0;           // elements outside tolerance (non-finite mismatches included)
  int64_t nonfinite_mismatch = 0;
  double max_abs = 0;        // over finite pairs
  double max_rel = 0;        // |got - want| / |want| over want != 0
  double nmse = 0;           // sum (got - want)^2 / sum want^2
  int64_t worst = -1;        // index of the element furthest outside tolerance
  double worst_got = 0, worst_want = 0;
  bool nmse_exceeded = false;  // Metric::Nmse: the tensor's NMSE is above the bound
  bool pass() const { return bad == 0 && !nmse_exceeded; }
  std::string summary() const;  // "max_abs=.. max_rel=.. nmse=.. bad=3/1024 worst[17]: got .. want .."
};

// Shapes and dtypes must match (an Error otherwise). Exact tolerances and integer dtypes compare
// bits. `compared`, when not empty, has one flag per element: 0 skips it.
ErrorReport compare(const TensorView& want, const TensorView& got, const Tolerance& tol,
                    const std::vector<uint8_t>& compared = {});
inline ErrorReport compare(const Tensor& want, const Tensor& got, const Tolerance& tol,
                           const std::vector<uint8_t>& compared = {}) {
  return compare(want.view(), got.view(), tol, compared);
}

}  // namespace ts
