#pragma once
// Parameter structs of the collective family (docs/catalog.md, "Family collective"): all_reduce,
// all_gather and broadcast over `world_size` ranks. A case holds every rank's input x.0 .. x.{W-1} and
// every rank's expected output; a backend running under a launcher of W ranks computes its own rank's.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/kinds.h"

namespace ts {

// How all_reduce combines the ranks' elements. Names as NCCL and torch.distributed spell them.
enum class ReduceOp { Sum, Max, Min };

template <> struct EnumNames<ReduceOp> {
  static constexpr std::string_view kWhat = "reduction";
  static constexpr std::array<std::pair<ReduceOp, std::string_view>, 3> kValues{
      {{ReduceOp::Sum, "sum"}, {ReduceOp::Max, "max"}, {ReduceOp::Min, "min"}}};
};

// The fields every collective has: the world it runs over and each rank's element count (0 allowed:
// a rank with nothing to contribute still takes part).
struct CollectiveParams {
  int64_t world_size = 1, len = 1;
  template <class V> void fields(V& v) { v("world_size", world_size); v("len", len); }
};

// out.r[i] = reduce over ranks q of x.q[i], on every rank r.
struct AllReduceParams : CollectiveParams {
  ReduceOp reduce = ReduceOp::Sum;
  template <class V> void fields(V& v) {
    CollectiveParams::fields(v);
    v("reduce", reduce);
  }
};

// out.r[q * len + i] = x.q[i], on every rank r.
struct AllGatherParams : CollectiveParams {};

// out.r = x.{src_rank}, on every rank r.
struct CollectiveBroadcastParams : CollectiveParams {
  int64_t src_rank = 0;
  template <class V> void fields(V& v) {
    CollectiveParams::fields(v);
    v("src_rank", src_rank);
  }
};

// The tensor-parallel gemm pair (Megatron-style, an MLP without its activation): Y = x a^T with the
// first weight a [hidden, k] split by its rows (the matrix's columns: rank r holds a.r, rows
// r*hidden/W .. (r+1)*hidden/W - 1), so rank r computes its slice Y_r [m, hidden/W]; then
// P_r = Y_r b.r^T with the second weight b [n, hidden] split by its columns (the matrix's rows: b.r is
// [n, hidden/W]), each rank's P_r a partial sum of the full product; then out.r = all_reduce(sum) of
// the P_q, equal on every rank to the one-rank pair (x a^T) b^T. `hidden` is a multiple of world_size.
struct TensorParallelGemmParams {
  int64_t world_size = 1, m = 1, k = 1, hidden = 1, n = 1;
  template <class V> void fields(V& v) {
    v("world_size", world_size); v("m", m); v("k", k); v("hidden", hidden); v("n", n);
  }
  int64_t shard() const { return hidden / world_size; }  // each rank's columns of Y
};

// Rank r's tensors: "x.3", "out.3".
inline std::string rank_tensor(std::string_view name, int64_t rank) {
  return std::string(name) + "." + std::to_string(rank);
}

}  // namespace ts
