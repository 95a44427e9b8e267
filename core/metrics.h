#pragma once
// Comparing a backend's output with the reference's. An element passes when
// |got - want| <= atol + rtol * |want|; NaN / Inf pass only where the reference has the same value.
#include <string>

#include "core/tensor.h"

namespace ts {

// A tolerance is data on the op, with the derivation that produced it (see core/tolerance.h).
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  std::string why;  // one line: how atol and rtol follow from the op's error analysis
  bool exact() const { return atol == 0 && rtol == 0; }
};

struct ErrorReport {
  int64_t count = 0;         // elements compared
  int64_t bad = 0;           // elements outside tolerance (non-finite mismatches included)
  int64_t nonfinite_mismatch = 0;
  double max_abs = 0;        // over finite pairs
  double max_rel = 0;        // |got - want| / |want| over want != 0
  double nmse = 0;           // sum (got - want)^2 / sum want^2
  int64_t worst = -1;        // index of the element furthest outside tolerance
  double worst_got = 0, worst_want = 0;
  bool pass() const { return bad == 0; }
  std::string summary() const;  // "max_abs=.. max_rel=.. nmse=.. bad=3/1024 worst[17]: got .. want .."
};

// Shapes and dtypes must match (an Error otherwise). Exact tolerances compare bits.
ErrorReport compare(const Tensor& want, const Tensor& got, const Tolerance& tol);

}  // namespace ts
