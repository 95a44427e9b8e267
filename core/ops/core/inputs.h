#pragma once
// Input generators and checks shared by several core-op descriptions (norms, caches, index tensors).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops/describe.h"

namespace ts::describe {

// The lengths every 1-D elementwise op is tried at (1, odd sizes below, at and past every vector
// width, a prime past a page), followed by the op's own model shapes.
template <class P> std::vector<Preset<P>> edge_lengths(std::vector<Preset<P>> model_shapes) {
  std::vector<Preset<P>> v;
  for (const auto& [n, tier] : {std::pair{1, Tier::Smoke}, {7, Tier::Smoke}, {17, Tier::Ci}, {33, Tier::Ci},
                                {257, Tier::Ci}, {1000, Tier::Ci}, {4097, Tier::Ci}}) {
    P p{};
    p.len = n;
    v.push_back({"len" + std::to_string(n), tier, p});
  }
  v.insert(v.end(), model_shapes.begin(), model_shapes.end());
  return v;
}

// Rows of N(0, s), s cycling 1, 1e4, 1e-3 by row: large rows catch a sum of squares kept in F16 or
// BF16 (it overflows or loses the row), tiny rows have mean(x^2) ~ eps, so eps in the wrong place
// shows. Clamped to +-6e4 so a 6-sigma draw stays finite in F16 (largest finite 65504).
inline void scaled_rows(Tensor& x, int64_t rows, int64_t cols, Rng& r) {
  constexpr double kScales[] = {1.0, 1e4, 1e-3};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < cols; ++c)
      x.set(i * cols + c, std::clamp(kScales[i % 3] * r.normal(), -6e4, 6e4));
}

// A cache [heads, capacity, hd] whose rows below `valid` hold data and whose other rows are NaN, so a
// kernel that reads or clobbers a slot it should not touch shows up.
inline void cache_rows(Tensor& cache, int64_t heads, int64_t capacity, int64_t hd, int64_t valid, Rng& r) {
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t row = 0; row < capacity; ++row) {
      const int64_t at = (h * capacity + row) * hd;
      if (row < valid)
        for (int64_t c = 0; c < hd; ++c) cache.set(at + c, r.normal());
      else
        poison_nan(cache, at, at + hd);
    }
}

// U32 ids below `bound`: the first is the last valid one and the second 0 (the edges), the rest random.
inline void index_values(Tensor& ids, int64_t bound, Rng& r) {
  uint32_t* v = ids.as<uint32_t>();
  for (int64_t i = 0; i < ids.numel(); ++i)
    v[i] = static_cast<uint32_t>(i == 0 ? bound - 1 : i == 1 ? 0 : r.below(bound));
}

// Every U32 value of tensor `name` below `bound`: an index past it is an Error, never a read.
inline void indices_below(const char* op, const TensorMap& t, const char* name, int64_t bound, const char* bound_name) {
  const Tensor& ids = t.at(name);
  const uint32_t* v = ids.as<uint32_t>();
  for (int64_t i = 0; i < ids.numel(); ++i)
    check(static_cast<int64_t>(v[i]) < bound, "{}: {}[{}] = {} is out of range: must be below {} = {}", op, name, i,
          v[i], bound_name, bound);
}

// The number of tensors whose name starts with `prefix` (a per-item list: caches.0, caches.1, ...).
inline int64_t count_prefixed(const TensorMap& t, const std::string& prefix) {
  int64_t n = 0;
  for (const auto& [name, x] : t) n += name.rfind(prefix, 0) == 0;
  return n;
}

inline void eps_ok(float eps) { check(eps >= 0, "parameter 'eps' must not be negative, is {}", eps); }

}  // namespace ts::describe
