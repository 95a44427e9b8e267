// Reference: the collective family (all_reduce, all_gather, broadcast), every rank's output computed
// in one process. Sums in double, rounded once; max and min exact, NaN propagating and +0 above -0
// (IEEE 754-2019 maximum / minimum); data movement as bits.
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/reference.h"

namespace ts::ref {
namespace {

// IEEE 754-2019 maximum and minimum: a NaN operand gives NaN; +0 is above -0. The order of the
// operands never matters, so every rank and every reduction tree gives the same bits.
double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// Every rank's out.r receives the same bytes.
void copy_to_every_rank(const CollectiveParams& p, TensorMap& t, const Tensor& value) {
  for (int64_t r = 0; r < p.world_size; ++r) {
    Tensor& out = t.at(rank_tensor("out", r));
    if (out.nbytes()) std::memcpy(out.data(), value.data(), out.nbytes());
  }
}

}  // namespace

void all_reduce(const AllReduceParams& p, TensorMap& t) {
  Tensor& out0 = t.at(rank_tensor("out", 0));
  for (int64_t i = 0; i < p.len; ++i) {
    double acc = t.at(rank_tensor("x", 0)).get(i);
    for (int64_t q = 1; q < p.world_size; ++q) {
      const double v = t.at(rank_tensor("x", q)).get(i);
      switch (p.reduce) {
        case ReduceOp::Sum: acc += v; break;  // in double: W terms of F16 / BF16 / F32 values
        case ReduceOp::Max: acc = maximum(acc, v); break;
        case ReduceOp::Min: acc = minimum(acc, v); break;
      }
    }
    out0.set(i, acc);  // the one rounding into the case's dtype
  }
  copy_to_every_rank(p, t, out0);
}

void all_gather(const AllGatherParams& p, TensorMap& t) {
  Tensor& out0 = t.at(rank_tensor("out", 0));
  for (int64_t q = 0; q < p.world_size; ++q) {
    const Tensor& x = t.at(rank_tensor("x", q));
    if (x.nbytes()) std::memcpy(out0.data() + q * x.nbytes(), x.data(), x.nbytes());
  }
  copy_to_every_rank(p, t, out0);
}

void broadcast(const CollectiveBroadcastParams& p, TensorMap& t) {
  copy_to_every_rank(p, t, t.at(rank_tensor("x", p.src_rank)));
}

// The one-rank pair: the shards put back together (a's rows in rank order, b's columns in rank order),
// then the reference's own gemm twice, Y rounded to the case's dtype between them as a one-rank
// model's activation is.
void tp_gemm_pair(const TensorParallelGemmParams& p, TensorMap& t) {
  const int64_t h = p.shard();
  const DType dt = t.at("x").dtype();
  TensorMap first{{"a", t.at("x")}, {"b", Tensor(dt, {p.hidden, p.k})}, {"out", Tensor(dt, {p.m, p.hidden})}};
  TensorMap second{{"b", Tensor(dt, {p.n, p.hidden})}, {"out", Tensor(dt, {p.m, p.n})}};
  const size_t es = dtype_size(dt);
  for (int64_t r = 0; r < p.world_size; ++r) {
    const Tensor& a = t.at(rank_tensor("a", r));
    if (a.nbytes()) std::memcpy(first.at("b").data() + r * a.nbytes(), a.data(), a.nbytes());
    const Tensor& b = t.at(rank_tensor("b", r));
    for (int64_t l = 0; l < p.n; ++l)
      std::memcpy(second.at("b").data() + (l * p.hidden + r * h) * es, b.data() + l * h * es, h * es);
  }
  gemm(GemmParams{p.m, p.hidden, p.k}, first);
  second.emplace("a", std::move(first.at("out")));
  gemm(GemmParams{p.m, p.n, p.hidden}, second);
  const Tensor& z = second.at("out");
  for (int64_t r = 0; r < p.world_size; ++r) std::memcpy(t.at(rank_tensor("out", r)).data(), z.data(), z.nbytes());
}

}  // namespace ts::ref
