// Reference: gemm.
#include "reference/reference.h"

namespace ts::ref {

void gemm(const GemmParams& p, TensorMap& t) {
  const auto a = to_f64(t.at("a")), b = to_f64(t.at("b"));
  Tensor& out = t.at("out");
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < p.k; ++k) acc += a[i * p.k + k] * b[j * p.k + k];
      out.set(i * p.n + j, acc);
    }
}

}  // namespace ts::ref
