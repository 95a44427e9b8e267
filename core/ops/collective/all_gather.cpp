// all_gather: out.r[q * len + i] = x.q[i] on every rank r: rank q's block lands at q * len, bit for bit.
#include "core/ops/collective/collective_common.h"

namespace ts {
using namespace describe;

const Op& op_all_gather() {
  static const TypedOp<AllGatherParams> op({
      .name = "all_gather",
      .family = "collective",
      .summary = "out.r[q*len + i] = x.q[i] on every rank r",
      .tensors = [](const AllGatherParams& p) { return collective::rank_tensors(p, p.world_size * p.len); },
      .validate_params = [](const AllGatherParams& p) { collective::check_params(p); },
      .generate = [](const AllGatherParams& p, TensorMap& t, Rng& r) {
        collective::generate(p, t, r, p.len == collective::kSpecialsLen);
      },
      .tolerance = [](const AllGatherParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const AllGatherParams& p, DType dt) { return Cost{0, bytes(dt, double(p.len) * (1 + p.world_size))}; },
      .cases = [] {
        std::vector<Preset<AllGatherParams>> v;
        for (const auto& g : collective::grid())
          if (g.len < collective::kHugeLen) v.push_back({g.name, g.tier, AllGatherParams{{g.world, g.len}}});
        // NaN payloads and signed zeros move as bits.
        for (int64_t w : collective::kWorlds)
          v.push_back({fmt::format("w{}_specials", w), Tier::Ci, AllGatherParams{{w, collective::kSpecialsLen}}});
        return v;
      }(),
  });
  return op;
}

}  // namespace ts
