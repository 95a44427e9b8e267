// gemm_awq: out[m, n] = a[m, k] @ W, W[k, j] = scales[g, j] * (q[k, j] - zero[g, j]), g = k / group_size;
// AutoAWQ's GEMM checkpoint tensors unchanged, nibble order included (core/quant/packing.h).
#include "core/ops/describe.h"
#include "core/ops/quant/gemm_common.h"

namespace ts {
using namespace describe;

namespace {

int64_t groups(const AwqParams& p) { return p.k / p.group_size; }

void check_params(const AwqParams& p) {
  check(p.bits == 4, "parameter 'bits' must be 4 (AutoAWQ's GEMM format), is {}", p.bits);
  positive(p.m, "m");
  positive(p.k, "k");
  positive(p.n, "n");
  positive(p.group_size, "group_size");
  check(p.k % p.group_size == 0, "parameter 'group_size': {} does not divide k = {}", p.group_size, p.k);
  check(p.n % 8 == 0, "parameter 'n': {} is not a multiple of 8 (4-bit values per int32 of qweight)", p.n);
}

std::vector<Preset<AwqParams>> cases() {
  std::vector<Preset<AwqParams>> v;
  for (int64_t gs : {32, 64, 128})
    for (int64_t m : {1, 7})
      v.push_back({fmt::format("g{}_m{}_n40_k256", gs, m), (m == 1 && gs == 128) ? Tier::Smoke : Tier::Ci,
                   {4, gs, m, 256, 40}});
  v.push_back({"g128_m64_n72_k384", Tier::Ci, {4, 128, 64, 384, 72}, {DType::F32}});
  v.push_back({"g128_m1_n256_k4096", Tier::Full, {4, 128, 1, 4096, 256}, {DType::F32}});
  // Groups of 6 k rows: a kernel that walks k four rows at a time ends each group on a partial step.
  v.push_back({"g6_m7_n40_k264", Tier::Ci, {4, 6, 7, 264, 40}});
  return v;
}

}  // namespace

const Op& op_gemm_awq() {
  static const TypedOp<AwqParams> op({
      .name = "gemm_awq",
      .family = "quant",
      .summary = "out[m,n] = a[m,k] @ (scales[g,n] * (q[k,n] - zeros[g,n])), AutoAWQ GEMM packing",
      .tensors = [](const AwqParams& p) {
        return std::vector{in("a", {p.m, p.k}), pinned(in("qweight", {p.k, p.n / 8}), DType::I32),
                           pinned(in("qzeros", {groups(p), p.n / 8}), DType::I32),
                           pinned(in("scales", {groups(p), p.n}), DType::F16), out("out", {p.m, p.n})};
      },
      .validate_params = check_params,
      .generate = [](const AwqParams& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        random_bytes(t["qweight"], r);
        random_bytes(t["qzeros"], r);
        quant_gemm::f16_scales(t["scales"], p.bits, r);
      },
      .tolerance = [](const AwqParams& p, DType dt, const TensorMap& in) {
        return quant_gemm::tolerance(dt, p.k, magnitude::max_abs(in, "a"), quant_gemm::awq_max_abs(p, in));
      },
      .cost = [](const AwqParams& p, DType dt) {
        const double w = static_cast<double>(p.k) * static_cast<double>(p.n) / 2 +
                         static_cast<double>(groups(p)) * static_cast<double>(p.n) * 2.5;
        return quant_gemm::cost(w, p.m, p.n, p.k, dt);
      },
      .cases = cases(),
      .benches = {{"g128_m1_n4096_k4096", Tier::Full, {4, 128, 1, 4096, 4096}, {DType::F32}},
                  {"g128_m512_n4096_k4096", Tier::Full, {4, 128, 512, 4096, 4096}, {DType::F32}}},
  });
  return op;
}

}  // namespace ts
