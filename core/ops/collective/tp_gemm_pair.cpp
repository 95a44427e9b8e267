// tp_gemm_pair: the tensor-parallel gemm pair over world_size ranks (core/ops/collective_params.h):
// rank r computes Y_r = x a.r^T (column-parallel), P_r = Y_r b.r^T (row-parallel, a partial sum), and
// out.r = sum over q of P_q (all_reduce), which equals the one-rank pair (x a^T) b^T on every rank.
// A backend runs the two gemms through its own gemm op and the sum through its own all_reduce
// (core/tensor_parallel.h); the reference runs the one-rank pair through its gemm twice.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/ops/collective/collective_common.h"
#include "core/ops/magnitude.h"

namespace ts {
using namespace describe;

namespace {

// The case's own intermediate magnitudes, from its inputs in double (the exact products, before any
// rounding): the largest |Y|, the largest norm of a row of one rank's slice Y_r, the largest |P_r|.
struct PairMagnitudes {
  double y_max = 0, y_slice_norm = 0, p_max = 0;
};

PairMagnitudes pair_magnitudes(const TensorParallelGemmParams& p, const TensorMap& in) {
  const int64_t h = p.shard();
  PairMagnitudes g;
  const Tensor& x = magnitude::input(in, "x");
  std::vector<double> y(static_cast<size_t>(h));
  for (int64_t r = 0; r < p.world_size; ++r) {
    const Tensor& a = magnitude::input(in, rank_tensor("a", r));
    const Tensor& b = magnitude::input(in, rank_tensor("b", r));
    for (int64_t i = 0; i < p.m; ++i) {
      double norm = 0;
      for (int64_t j = 0; j < h; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) acc += x.get(i * p.k + kk) * a.get(j * p.k + kk);
        y[static_cast<size_t>(j)] = acc;
        // Only finite terms count (core/ops/magnitude.h): a NaN or Inf is matched element by element.
        if (std::isfinite(acc)) g.y_max = std::max(g.y_max, std::fabs(acc)), norm += acc * acc;
      }
      g.y_slice_norm = std::max(g.y_slice_norm, std::sqrt(norm));
      for (int64_t l = 0; l < p.n; ++l) {
        double acc = 0;
        for (int64_t j = 0; j < h; ++j) acc += y[static_cast<size_t>(j)] * b.get(l * h + j);
        if (std::isfinite(acc)) g.p_max = std::max(g.p_max, std::fabs(acc));
      }
    }
  }
  return g;
}

// The error analysis, against the reference's pair (u: the case dtype's unit roundoff):
//  - the first gemm, each rank's own, against the reference's Y (both rounded to the dtype): gemm's own
//    bound t1 (k terms of size max|x| max|a|, 2 roundings), |Y^ - Y| <= t1.atol + t1.rtol |Y| per
//    element, so a row of one rank's slice is off by at most e1 = sqrt(h) t1.atol + t1.rtol
//    max||Y_r row||, which reaches P_r through b.r by Cauchy-Schwarz: e1 max||b.r row||;
//  - the second gemm on the rank's Y^_r: h terms of size max|Y^| max|b| accumulated in F32 (t2's
//    absolute part), its output rounded once to the dtype: u max|P_r|;
//  - both for each of the W ranks, whose errors add;
//  - the all_reduce: W partials of size max|P_r| added in F32 (all_reduce's own bound t3), and two
//    roundings of the dtype relative to the output (the backend's last, the reference's one).
Tolerance pair_tolerance(const TensorParallelGemmParams& p, DType dt, const TensorMap& in) {
  const int64_t h = p.shard();
  const double w = double(p.world_size), u = unit_roundoff(dt);
  const double mx = magnitude::max_abs(in, "x"), ma = magnitude::max_abs(in, "a"), mb = magnitude::max_abs(in, "b");
  const double b_norm = magnitude::max_row_norm(in, "b", h);
  const PairMagnitudes g = pair_magnitudes(p, in);
  const Tolerance t1 = tol::accumulation(dt, double(p.k), mx * ma, "");
  const double y_hat = g.y_max * (1 + t1.rtol) + t1.atol;
  const Tolerance t2 = tol::accumulation(dt, double(h), y_hat * mb, "");
  const Tolerance t3 = tol::accumulation(dt, w, g.p_max, "");
  const double first = (std::sqrt(double(h)) * t1.atol + t1.rtol * g.y_slice_norm) * b_norm;
  const double second = t2.atol + u * g.p_max;
  const double atol = w * (first + second) + t3.atol;
  return {atol, t3.rtol,
          fmt::format("tensor-parallel pair over {} ranks, read from the case: gemm 1 (k={}, max|x| max|a| = {}) "
                      "off by {} abs + {} rel, through ||Y_r row|| <= {} and ||b.r row|| <= {}: {} a rank; gemm 2 "
                      "(h={}, |Y| <= {}, max|b| = {}) and its rounding (|P_r| <= {}): {} a rank; x {} ranks + "
                      "the F32 sum of the partials {} = {} abs; + 2 u_{} rel",
                      p.world_size, p.k, magnitude::str(mx * ma), magnitude::str(t1.atol), magnitude::str(t1.rtol),
                      magnitude::str(g.y_slice_norm), magnitude::str(b_norm), magnitude::str(first), h,
                      magnitude::str(y_hat), magnitude::str(mb), magnitude::str(g.p_max), magnitude::str(second),
                      p.world_size, magnitude::str(t3.atol), magnitude::str(atol), dtype_name(dt))};
}

std::vector<TensorDecl> pair_tensors(const TensorParallelGemmParams& p) {
  const int64_t h = p.shard();
  std::vector<TensorDecl> v{in("x", {p.m, p.k})};
  for (int64_t r = 0; r < p.world_size; ++r) v.push_back(in(rank_tensor("a", r), {h, p.k}));
  for (int64_t r = 0; r < p.world_size; ++r) v.push_back(in(rank_tensor("b", r), {p.n, h}));
  for (int64_t r = 0; r < p.world_size; ++r) v.push_back(out(rank_tensor("out", r), {p.m, p.n}));
  return v;
}

void check_pair(const TensorParallelGemmParams& p) {
  positive(p.world_size, "world_size");
  check(p.world_size <= collective::kMaxWorld, "parameter 'world_size' is {}, past the {} ranks touchstone takes",
        p.world_size, collective::kMaxWorld);
  positive(p.m, "m");
  positive(p.k, "k");
  positive(p.hidden, "hidden");
  positive(p.n, "n");
  check(p.hidden % p.world_size == 0, "parameter 'hidden' is {}, not a multiple of world_size {} (each rank takes "
        "hidden / world_size of the first weight's rows)", p.hidden, p.world_size);
  // Every tensor's size without overflow: the weights whole, every rank's output.
  (void)checked::mul(p.m, p.k, "m * k");
  (void)checked::mul(p.hidden, p.k, "hidden * k");
  (void)checked::mul(p.n, p.hidden, "n * hidden");
  (void)checked::mul(checked::mul(p.m, p.n, "m * n"), p.world_size, "m * n * world_size");
}

std::vector<Preset<TensorParallelGemmParams>> pair_cases() {
  std::vector<Preset<TensorParallelGemmParams>> v;
  for (int64_t w : collective::kWorlds) {
    const Tier small = w <= 2 ? Tier::Smoke : Tier::Ci;
    // One column of Y a rank (every dimension 1 on one rank); odd sizes past every vector width with
    // a few columns a rank; a decode row (m = 1) with a wider shard.
    v.push_back({fmt::format("w{}_m1_k1_h{}_n1", w, w), small, {w, 1, 1, w, 1}});
    v.push_back({fmt::format("w{}_m5_k67_h{}_n33", w, 8 * w), Tier::Ci, {w, 5, 67, 8 * w, 33}});
    v.push_back({fmt::format("w{}_m1_k128_h{}_n96", w, 32 * w), Tier::Ci, {w, 1, 128, 32 * w, 96}});
    // An MLP block's proportions (hidden 4 x the model's width), full tier.
    if (w == 2 || w == 4) v.push_back({fmt::format("w{}_m8_k256_h1024_n256", w), Tier::Full, {w, 8, 256, 1024, 256}});
  }
  return v;
}

}  // namespace

const Op& op_tp_gemm_pair() {
  static const TypedOp<TensorParallelGemmParams> op({
      .name = "tp_gemm_pair",
      .family = "collective",
      .summary = "out.r = sum_q (x a.q^T) b.q^T on every rank r: column- then row-parallel gemm, all_reduce",
      .tensors = pair_tensors,
      .validate_params = check_pair,
      .generate = [](const TensorParallelGemmParams& p, TensorMap& t, Rng& r) {
        normal(t["x"], r);
        for (int64_t q = 0; q < p.world_size; ++q) normal(t[rank_tensor("a", q)], r);
        for (int64_t q = 0; q < p.world_size; ++q) normal(t[rank_tensor("b", q)], r);
      },
      .tolerance = pair_tolerance,
      // The pair over every rank (what the reference does, and the ranks do together): both gemms, the
      // W - 1 adds of every output element; every weight read once, x and each rank's output once.
      .cost = [](const TensorParallelGemmParams& p, DType dt) {
        const double flops = 2.0 * p.m * p.k * p.hidden + 2.0 * p.m * p.hidden * p.n +
                             double(p.world_size - 1) * p.m * p.n;
        return Cost{flops, bytes(dt, double(p.m) * p.k + double(p.hidden) * p.k + double(p.n) * p.hidden +
                                         double(p.world_size) * p.m * p.n)};
      },
      .cases = pair_cases(),
  });
  return op;
}

}  // namespace ts
