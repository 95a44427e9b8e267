#include "core/ops/collective/collective_common.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace ts::collective {

using namespace describe;

std::vector<TensorDecl> rank_tensors(const CollectiveParams& p, int64_t out_len) {
  std::vector<TensorDecl> v;
  for (int64_t r = 0; r < p.world_size; ++r) v.push_back(in(rank_tensor("x", r), {p.len}));
  for (int64_t r = 0; r < p.world_size; ++r) v.push_back(out(rank_tensor("out", r), {out_len}));
  return v;
}

void check_params(const CollectiveParams& p) {
  positive(p.world_size, "world_size");
  check(p.world_size <= kMaxWorld, "parameter 'world_size' is {}, past the {} ranks touchstone takes", p.world_size,
        kMaxWorld);
  non_negative(p.len, "len");
  (void)checked::mul(p.world_size, p.len, "world_size * len");
}

void generate(const CollectiveParams& p, TensorMap& t, Rng& r, bool specials) {
  constexpr double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t q = 0; q < p.world_size; ++q) {
    Tensor& x = t.at(rank_tensor("x", q));
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, std::clamp(r.normal(), -kMaxMagnitude, kMaxMagnitude));
    if (!specials) continue;
    const int64_t last = p.world_size - 1;
    for (int64_t i = 0; i < x.numel(); i += 8) {
      // Element i: a NaN on the last rank only (every reduction is NaN there).
      if (q == last) x.set(i, nan);
      // i + 1: +Inf on rank 0, -Inf on the last (sum NaN, max +Inf, min -Inf; one rank: +Inf).
      if (i + 1 < x.numel() && q == 0) x.set(i + 1, inf);
      if (i + 1 < x.numel() && q == last && last > 0) x.set(i + 1, -inf);
      // i + 2: -0 on every rank (sum, max and min all -0). i + 3: +0 on rank 0, -0 elsewhere (max +0,
      // min -0, sum +0).
      if (i + 2 < x.numel()) x.set(i + 2, -0.0);
      if (i + 3 < x.numel()) x.set(i + 3, q == 0 ? 0.0 : -0.0);
      // i + 4: +Inf on every rank (sum +Inf). i + 5: a NaN on rank 0 beside -Inf elsewhere.
      if (i + 4 < x.numel()) x.set(i + 4, inf);
      if (i + 5 < x.numel()) x.set(i + 5, q == 0 ? nan : -inf);
    }
  }
}

std::vector<GridPoint> grid() {
  std::vector<GridPoint> g;
  for (int64_t w : kWorlds) {
    const Tier small = w <= 2 ? Tier::Smoke : Tier::Ci;
    // The large length at the ci tier up to 4 ranks: 8 oversubscribed ranks each making every rank's
    // input and the reference's outputs cost CI's two cores a minute at it; the full tier has it.
    for (const auto& [len, tier] : {std::pair<int64_t, Tier>{1, small}, {1021, Tier::Ci}, {0, Tier::Ci},
                                    {kLargeLen, w <= 4 ? Tier::Ci : Tier::Full}})
      g.push_back({w, len, tier, fmt::format("w{}_len{}", w, len)});
    if (w == 2 || w == 4) g.push_back({w, kHugeLen, Tier::Full, fmt::format("w{}_len16M", w)});
  }
  return g;
}

}  // namespace ts::collective
