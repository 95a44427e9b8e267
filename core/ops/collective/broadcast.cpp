// broadcast: out.r = x.{src_rank} on every rank r, bit for bit. Every rank holds an x (the seed's
// broadcast(buf, len, src_rank) is in place; here a rank's input and output are apart so that the
// judge sees what arrived), and only the source's is read.
#include "core/ops/collective/collective_common.h"

namespace ts {
using namespace describe;

const Op& op_broadcast() {
  static const TypedOp<CollectiveBroadcastParams> op({
      .name = "broadcast",
      .family = "collective",
      .summary = "out.r = x.{src_rank} on every rank r",
      .tensors = [](const CollectiveBroadcastParams& p) { return collective::rank_tensors(p, p.len); },
      .validate_params = [](const CollectiveBroadcastParams& p) {
        collective::check_params(p);
        check(p.src_rank >= 0 && p.src_rank < p.world_size,
              "parameter 'src_rank' is {}, outside the world of {} ranks (0 .. {})", p.src_rank, p.world_size,
              p.world_size - 1);
      },
      .generate = [](const CollectiveBroadcastParams& p, TensorMap& t, Rng& r) {
        collective::generate(p, t, r, p.len == collective::kSpecialsLen);
      },
      .tolerance = [](const CollectiveBroadcastParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const CollectiveBroadcastParams& p, DType dt) { return Cost{0, bytes(dt, 2.0 * p.len)}; },
      .cases = [] {
        std::vector<Preset<CollectiveBroadcastParams>> v;
        // The source is the last rank (a rank other than 0 where there is one: a root hard-wired to 0
        // shows), and rank 0 in the specials.
        for (const auto& g : collective::grid())
          if (g.len < collective::kHugeLen)
            v.push_back({g.name, g.tier, CollectiveBroadcastParams{{g.world, g.len}, g.world - 1}});
        for (int64_t w : collective::kWorlds)
          v.push_back({fmt::format("w{}_specials_src0", w), Tier::Ci,
                       CollectiveBroadcastParams{{w, collective::kSpecialsLen}, 0}});
        return v;
      }(),
  });
  return op;
}

}  // namespace ts
