// add_inplace: residual[i] += x[i].
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
AddInplaceParams len(int64_t n) { return {{n}}; }
}  // namespace

const Op& op_add_inplace() {
  static const TypedOp<AddInplaceParams> op({
      .name = "add_inplace",
      .family = "core",
      .summary = "residual[i] += x[i]",
      .tensors = [](const AddInplaceParams& p) { return std::vector{inout("residual", {p.len}), in("x", {p.len})}; },
      .validate_params = [](const AddInplaceParams& p) { positive(p.len, "len"); },
      .generate = [](const AddInplaceParams&, TensorMap& t, Rng& r) { normal(t["residual"], r); normal(t["x"], r); },
      // One F32 add, then the output rounding.
      .tolerance = [](const AddInplaceParams&, DType dt, const TensorMap&) { return tol::elementwise(dt, 1); },
      .cost = [](const AddInplaceParams& p, DType dt) { return Cost{double(p.len), bytes(dt, 3.0 * p.len)}; },
      .cases = edge_lengths<AddInplaceParams>({
          {"llama3_8b_t4_d4096", Tier::Full, len(4 * 4096)},
      }),
      .benches = {
          {"t2048_d4096", Tier::Full, len(2048 * 4096)},  // 96 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
