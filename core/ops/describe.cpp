#include "core/ops/describe.h"

#include <cmath>
#include <limits>

#include "core/parallel.h"

namespace ts::describe {

int64_t dim_of(const TensorMap& t, const std::string& name, size_t rank, size_t dim) {
  auto it = t.find(name);
  check(it != t.end(), "missing tensor '{}'", name);
  check(it->second.shape().size() == rank, "tensor '{}' must have rank {}, has shape {}", name, rank,
        shape_str(it->second.shape()));
  return it->second.shape()[dim];
}

void normal(Tensor& x, Rng& r, double sigma) {
  // Value i takes draws 2i and 2i + 1 of r's stream wherever it is computed (Rng::skipped).
  const int64_t n = x.numel();
  const Rng start = r;
  parallel_ranges(n, int64_t{1} << 18, [&](int64_t b, int64_t e) {
    Rng local = start.skipped(2 * static_cast<uint64_t>(b));
    for (int64_t i = b; i < e; ++i) x.set(i, sigma * local.normal());
  });
  r = start.skipped(2 * static_cast<uint64_t>(n));
}

void uniform(Tensor& x, Rng& r, double lo, double hi) {
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, r.uniform(lo, hi));
}

void poison_nan(Tensor& x, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) x.set(i, std::numeric_limits<double>::quiet_NaN());
}

void uniform_int(Tensor& x, Rng& r, int64_t lo, int64_t hi) {
  check(!is_float(x.dtype()), "uniform_int: tensor of dtype {} is not an integer tensor", dtype_name(x.dtype()));
  check(lo <= hi, "uniform_int: empty range [{}, {}]", lo, hi);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(lo + r.below(hi - lo + 1)));
}

void random_bytes(Tensor& x, Rng& r) {
  auto* p = x.as<uint8_t>();
  for (size_t i = 0; i < x.nbytes(); ++i) p[i] = static_cast<uint8_t>(r.next() >> 56);
}

void rope_tables(Tensor& cos, Tensor& sin, int64_t max_pos, int64_t half) {
  for (int64_t p = 0; p < max_pos; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) * std::pow(10000.0, -static_cast<double>(i) / static_cast<double>(half));
      cos.set(p * half + i, std::cos(angle));
      sin.set(p * half + i, std::sin(angle));
    }
}

}  // namespace ts::describe
