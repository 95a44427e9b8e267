// add, mul: out[d0, d1, d2] = a[d0, d1, d2] (+ or *) b[e0, e1, e2], b broadcast numpy-style (each e_i
// is d_i or 1; core/ops/tensor/broadcast.h holds the index arithmetic). One description serves both.
#include "core/ops/describe.h"
#include "core/ops/tensor_params.h"

namespace ts {
using namespace describe;

namespace {

BroadcastParams dims(int64_t d0, int64_t d1, int64_t d2, int64_t e0, int64_t e1, int64_t e2) {
  return {d0, d1, d2, e0, e1, e2};
}

void check_axis(int64_t d, int64_t e, const char* d_name, const char* e_name) {
  positive(d, d_name);
  check(e == 1 || e == d, "parameter '{}' must be 1 or {} = {} (b broadcasts along an axis only from 1), is {}",
        e_name, d_name, d, e);
}

OpDef<BroadcastParams> broadcast_def(bool is_mul) {
  using P = BroadcastParams;
  return {
      .name = is_mul ? "mul" : "add",
      .family = "tensor",
      .summary = is_mul ? "out[d0,d1,d2] = a * b[e0,e1,e2] (b broadcast where e_i = 1)"
                        : "out[d0,d1,d2] = a + b[e0,e1,e2] (b broadcast where e_i = 1)",
      .tensors = [](const P& p) {
        return std::vector{in("a", {p.d0, p.d1, p.d2}), in("b", {p.e0, p.e1, p.e2}), out("out", {p.d0, p.d1, p.d2})};
      },
      .validate_params = [](const P& p) {
        check_axis(p.d0, p.e0, "d0", "e0");
        check_axis(p.d1, p.e1, "d1", "e1");
        check_axis(p.d2, p.e2, "d2", "e2");
        (void)checked::mul(checked::mul(p.d0, p.d1, "d0 * d1"), p.d2, "d0 * d1 * d2");
      },
      .generate = [](const P&, TensorMap& t, Rng& r) { normal(t["a"], r); normal(t["b"], r); },
      // One F32 operation on exact inputs, then the output's rounding.
      .tolerance = [](const P&, DType dt, const TensorMap&) { return tol::elementwise(dt, 1); },
      .cost = [](const P& p, DType dt) {
        const double n = double(p.d0 * p.d1 * p.d2);
        return Cost{n, bytes(dt, 2 * n + double(p.e0 * p.e1 * p.e2))};
      },
      .cases = {
          {"same_1x1x1", Tier::Smoke, dims(1, 1, 1, 1, 1, 1)},
          {"same_2x3x7", Tier::Smoke, dims(2, 3, 7, 2, 3, 7)},
          {"bcast0_3x5x33", Tier::Smoke, dims(3, 5, 33, 1, 5, 33)},
          {"bcast1_3x5x33", Tier::Ci, dims(3, 5, 33, 3, 1, 33)},
          {"bcast2_3x5x33", Tier::Ci, dims(3, 5, 33, 3, 5, 1)},
          {"bcast_all_3x5x33", Tier::Ci, dims(3, 5, 33, 1, 1, 1)},
          // b a row broadcast over batch and sequence (a bias or a norm weight), odd and vector-crossing.
          {"bcast01_2x17x257", Tier::Ci, dims(2, 17, 257, 1, 1, 257)},
          {"bcast12_2x17x257", Tier::Ci, dims(2, 17, 257, 2, 1, 1)},
          {"seq1_1x1x4097", Tier::Ci, dims(1, 1, 4097, 1, 1, 4097)},
          {"same_1x7x1000", Tier::Ci, dims(1, 7, 1000, 1, 7, 1000)},
          {"llama3_8b_t4_residual", Tier::Full, dims(1, 4, 4096, 1, 4, 4096)},
      },
      .benches = {
          // Llama-3-8B prefill 512: the residual add, and a row (norm weight) scaling every token.
          {"llama3_8b_prefill512_same", Tier::Full, dims(1, 512, 4096, 1, 512, 4096)},
          {"llama3_8b_prefill512_row", Tier::Full, dims(1, 512, 4096, 1, 1, 4096)},
      },
  };
}

}  // namespace

const Op& op_add() {
  static const TypedOp<BroadcastParams> op(broadcast_def(false));
  return op;
}

const Op& op_mul() {
  static const TypedOp<BroadcastParams> op(broadcast_def(true));
  return op;
}

}  // namespace ts
