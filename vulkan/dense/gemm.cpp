// gemm, linear_3d, linear_3d_bias: the shared-memory tiled kernel, or the GEMV kernel when m is small
// (decode).
#include "core/ops/core_params.h"
#include "core/ops/tensor_params.h"
#include "vulkan/plan.h"

namespace ts::vk {

namespace {
constexpr int64_t kTile = 128;      // gemm.comp: TS * R
constexpr int64_t kGemvMaxM = 4;    // gemv.comp: MAXM
constexpr int64_t kGemvRows = 8;    // gemv.comp: NR

// out[m, n] = a[m, k] @ b[n, k]^T (+ bias[n] when `bias` is named: the _bias variants add it to each
// F32 result before the one rounding). b above maxStorageBufferRange: one dispatch per window of its
// rows (output columns).
std::vector<Dispatch> gemm_rows(const Decls& decls, const Target& tg, int64_t m, int64_t n, int64_t k,
                                const std::string& a, const std::string& b, const std::string& out,
                                const std::string& bias) {
  std::vector<Dispatch> list;
  const uint64_t row_bytes = static_cast<uint64_t>(k) * dtype_size(decls.at(b).dtype);
  for (auto [n0, nn] : tg.row_windows(n, row_bytes)) {
    Dispatch d;
    d.bindings = {a, Binding(b, n0 * row_bytes, nn * row_bytes), out};
    if (!bias.empty()) d.bindings.push_back(bias);
    d.push = Push().u(m).u(nn).u(k).u(n).u(n0).words();
    if (m <= kGemvMaxM) {
      d.shader = tg.variant(bias.empty() ? Kernel::gemv : Kernel::gemv_bias);
      d.groups = {groups_for(nn, kGemvRows, tg.group_cap), 1, 1};
    } else {
      d.shader = tg.variant(bias.empty() ? Kernel::gemm_tiled : Kernel::gemm_tiled_bias);
      d.groups = {ceil_div(nn, kTile), ceil_div(m, kTile), 1};
    }
    list.push_back(std::move(d));
  }
  return list;
}

}  // namespace

void add_gemm_planners(PlannerTable& t) {
  add_planner(t, ops::gemm, [](const GemmParams& p, const Decls& decls, const Target& tg) {
    return gemm_rows(decls, tg, p.m, p.n, p.k, "a", "b", "out", "");
  });
  // linear_3d(_bias): the gemm of the batch * seq rows of x.
  add_planner(t, ops::linear_3d, [](const Linear3dParams& p, const Decls& decls, const Target& tg) {
    return gemm_rows(decls, tg, p.batch * p.seq, p.n, p.k, "x", "weight", "out", "");
  });
  add_planner(t, ops::linear_3d_bias, [](const Linear3dBiasParams& p, const Decls& decls, const Target& tg) {
    return gemm_rows(decls, tg, p.batch * p.seq, p.n, p.k, "x", "weight", "out", "bias");
  });
}

}  // namespace ts::vk
