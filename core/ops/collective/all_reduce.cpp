// all_reduce: out.r[i] = reduce over ranks q of x.q[i], the same on every rank r. Sum in F32 (F16 and
// BF16 widened first), max and min exact with NaN propagating (docs/catalog.md, "Family collective").
#include <algorithm>

#include <fmt/format.h>

#include "core/ops/collective/collective_common.h"
#include "core/ops/magnitude.h"

namespace ts {
using namespace describe;

namespace {

std::vector<Preset<AllReduceParams>> all_reduce_cases() {
  std::vector<Preset<AllReduceParams>> v;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
    for (const auto& g : collective::grid()) {
      // max and min are exact whatever the length: their edges are 1 and an odd length; sum takes
      // every length, 0 and the large ones included.
      if (op != ReduceOp::Sum && g.len != 1 && g.len != 1021) continue;
      v.push_back({named(op, g.name), g.tier, AllReduceParams{{g.world, g.len}, op}});
    }
    for (int64_t w : collective::kWorlds)
      v.push_back({named(op, fmt::format("w{}_specials", w)), Tier::Ci,
                   AllReduceParams{{w, collective::kSpecialsLen}, op}});
  }
  return v;
}

bool is_specials(const AllReduceParams& p) { return p.len == collective::kSpecialsLen; }

}  // namespace

const Op& op_all_reduce() {
  static const TypedOp<AllReduceParams> op({
      .name = "all_reduce",
      .family = "collective",
      .summary = "out.r[i] = reduce_q x.q[i] on every rank r (reduce: sum, max, min)",
      .tensors = [](const AllReduceParams& p) { return collective::rank_tensors(p, p.len); },
      .validate_params = [](const AllReduceParams& p) { collective::check_params(p); },
      .generate = [](const AllReduceParams& p, TensorMap& t, Rng& r) { collective::generate(p, t, r, is_specials(p)); },
      // Sum: W terms added in F32 in whatever order the transport reduces them (W - 1 roundings, each
      // relative to a partial sum of at most W max|x|), then one rounding to the case's dtype; the
      // reference adds in double and rounds once. The terms' size is read from the case's own ranks'
      // inputs. Max and min pick one of the inputs: exact.
      .tolerance = [](const AllReduceParams& p, DType dt, const TensorMap& in) {
        if (p.reduce != ReduceOp::Sum) return Tolerance{0, 0, "max / min pick an input: bit-exact"};
        double mag = 0;
        for (int64_t r = 0; r < p.world_size; ++r)
          if (in.count(fmt::format("x.{}", r))) mag = std::max(mag, magnitude::max_abs(in, fmt::format("x.{}", r)));
        return tol::accumulation(dt, double(p.world_size), mag, "max over ranks of max|x.r|");
      },
      // One rank's share: W - 1 adds per element; it reads its x and writes its out (the transport's
      // traffic is the benchmark's algbw and busbw, not this).
      .cost = [](const AllReduceParams& p, DType dt) {
        return Cost{double(p.world_size - 1) * p.len, bytes(dt, 2.0 * p.len)};
      },
      .cases = all_reduce_cases(),
  });
  return op;
}

}  // namespace ts
