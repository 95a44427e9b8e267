#pragma once
// What the collective ops share: the per-rank tensor lists, the parameter checks, the generator and
// the world x length grid every op is tried at.
#include <string>
#include <vector>

#include "core/ops/collective_params.h"
#include "core/ops/describe.h"

namespace ts::collective {

// A world far past any launcher's, small enough that W * len and the per-rank tensor lists stay sane.
inline constexpr int64_t kMaxWorld = 4096;

// x.0 .. x.{W-1}, each [len], then out.0 .. out.{W-1}, each [out_len].
std::vector<TensorDecl> rank_tensors(const CollectiveParams& p, int64_t out_len);

// world_size in [1, kMaxWorld], len >= 0, W * len without overflow.
void check_params(const CollectiveParams& p);

// Every rank's x from N(0, 1) clamped to +-6 (so a sum of W terms has a bound the tolerance states).
// `specials`: a few elements per rank become NaN, +-Inf, +-0 in a pattern where ranks disagree (one
// rank's NaN, +Inf on one rank and -Inf on another, +0 beside -0), the cases that pin the NaN and
// signed-zero rules of docs/catalog.md.
void generate(const CollectiveParams& p, TensorMap& t, Rng& r, bool specials);
inline constexpr double kMaxMagnitude = 6.0;
inline constexpr int64_t kSpecialsLen = 40;  // the specials' pattern repeats every 8 elements

// The worlds and lengths of the matrix: for each W in {1, 2, 3, 4, 8}, `len` 0 (every rank empty),
// 1, an odd length past every vector width, and a large odd one (256 KiB in F32) past Open MPI's eager
// limits and into its segmented (ring) algorithms; 16 M elements (64 MiB in F32 per rank) at the full
// tier for 2 and 4 ranks, all_reduce's sum only (every case holds every rank's input and output, and
// the harness's own sweeps copy a case many times over: all_gather's over 4 ranks would be 1.25 GiB).
inline constexpr int64_t kLargeLen = 65537;
inline constexpr int64_t kHugeLen = int64_t{1} << 24;
// Two ranks first: the catalog shows an op by its first case.
inline constexpr int64_t kWorlds[] = {2, 3, 4, 8, 1};
struct GridPoint {
  int64_t world, len;
  Tier tier;
  std::string name;  // "w4_len1021"
};
std::vector<GridPoint> grid();

}  // namespace ts::collective
