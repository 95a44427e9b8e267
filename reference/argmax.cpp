// Reference: argmax_rows.
#include <cstdint>
#include <limits>

#include "reference/reference.h"

namespace ts::ref {

void argmax_rows(const ArgmaxRowsParams& p, TensorMap& t) {
  const auto logits = to_f64(t.at("logits"));
  uint32_t* ids = t.at("ids").as<uint32_t>();
  for (int64_t r = 0; r < p.m; ++r) {
    // Strictly greater: on ties the first index wins. A NaN never compares greater, so it never wins
    // (a row of NaN or -inf only gives 0).
    double best = -std::numeric_limits<double>::infinity();
    int64_t best_i = 0;
    for (int64_t c = 0; c < p.n; ++c)
      if (logits[r * p.n + c] > best) {
        best = logits[r * p.n + c];
        best_i = c;
      }
    ids[r] = static_cast<uint32_t>(best_i);
  }
}

}  // namespace ts::ref
