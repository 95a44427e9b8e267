// add_bias: data[r, c] += bias[c], the bias of a linear layer broadcast over rows.
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
AddBiasParams shape(int64_t rows, int64_t cols) { return {rows, cols}; }
}  // namespace

const Op& op_add_bias() {
  static const TypedOp<AddBiasParams> op({
      .name = "add_bias",
      .family = "core",
      .summary = "data[r, c] += bias[c]",
      .tensors = [](const AddBiasParams& p) {
        return std::vector{inout("data", {p.rows, p.cols}), in("bias", {p.cols})};
      },
      .validate_params = [](const AddBiasParams& p) { positive(p.rows, "rows"); positive(p.cols, "cols"); },
      .generate = [](const AddBiasParams&, TensorMap& t, Rng& r) { normal(t["data"], r); normal(t["bias"], r); },
      // One F32 add, then the output rounding.
      .tolerance = [](const AddBiasParams&, DType dt, const TensorMap&) { return tol::elementwise(dt, 1); },
      .cost = [](const AddBiasParams& p, DType dt) {
        const double n = double(p.rows) * double(p.cols);
        return Cost{n, bytes(dt, 2.0 * n + double(p.cols))};
      },
      .cases = {
          {"r1_c1", Tier::Smoke, shape(1, 1)},
          {"r3_c7", Tier::Smoke, shape(3, 7)},
          {"r5_c33", Tier::Ci, shape(5, 33)},
          {"r17_c257", Tier::Ci, shape(17, 257)},
          {"r2_c1000", Tier::Ci, shape(2, 1000)},
          {"r1_c4097", Tier::Ci, shape(1, 4097)},
          {"bert_large_t8_d1024", Tier::Ci, shape(8, 1024)},
          {"qwen25_7b_qkv_t16", Tier::Full, shape(16, 3584 + 2 * 512)},
      },
      .benches = {
          {"t2048_d4096", Tier::Full, shape(2048, 4096)},  // 64 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
