// gemm_gptq: out[m, n] = a[m, k] @ W, W[k, j] = scales[g, j] * (q[k, j] - zero[g, j]), g = g_idx[k] with
// act-order (desc_act) or k / group_size; AutoGPTQ's checkpoint tensors unchanged (core/quant/packing.h).
#include <algorithm>
#include <numeric>

#include "core/ops/describe.h"
#include "core/ops/quant/gemm_common.h"

namespace ts {
using namespace describe;

namespace {

int64_t groups(const GptqParams& p) { return p.k / p.group_size; }

void check_params(const GptqParams& p) {
  check(p.bits == 4 || p.bits == 8, "parameter 'bits' must be 4 or 8, is {}", p.bits);
  positive(p.m, "m");
  positive(p.k, "k");
  positive(p.n, "n");
  positive(p.group_size, "group_size");
  check(p.k % p.group_size == 0, "parameter 'group_size': {} does not divide k = {}", p.group_size, p.k);
  const int64_t per = 32 / p.bits;
  check(p.k % per == 0, "parameter 'k': {} is not a multiple of {} ({}-bit values per int32 of qweight)", p.k, per, p.bits);
  check(p.n % per == 0, "parameter 'n': {} is not a multiple of {} ({}-bit zeros per int32 of qzeros)", p.n, per, p.bits);
}

// Act-order as AutoGPTQ writes it: every group keeps group_size rows, in a random order of k.
void act_order(const GptqParams& p, Tensor& g_idx, Rng& r) {
  std::vector<int64_t> g(static_cast<size_t>(p.k));
  for (int64_t i = 0; i < p.k; ++i) g[static_cast<size_t>(i)] = i / p.group_size;
  for (int64_t i = p.k - 1; i > 0; --i) std::swap(g[static_cast<size_t>(i)], g[static_cast<size_t>(r.below(i + 1))]);
  for (int64_t i = 0; i < p.k; ++i) g_idx.set(i, static_cast<double>(g[static_cast<size_t>(i)]));
}

std::vector<Preset<GptqParams>> cases() {
  std::vector<Preset<GptqParams>> v;
  for (int64_t bits : {4, 8})
    for (int64_t gs : {32, 64, 128})
      for (bool act : {false, true})
        for (int64_t m : {1, 7}) {
          const Tier tier = (m == 1 && gs == 128) ? Tier::Smoke : Tier::Ci;
          // n = 40: a multiple of the packing, of no tile; k = 256: 8, 4 or 2 groups.
          v.push_back({fmt::format("b{}_g{}{}_m{}_n40_k256", bits, gs, act ? "_act" : "", m), tier,
                       {bits, gs, m, 256, 40, act}});
        }
  for (int64_t bits : {4, 8})
    v.push_back({fmt::format("b{}_g128_act_m64_n72_k384", bits), Tier::Ci, {bits, 128, 64, 384, 72, true}, {DType::F32}});
  v.push_back({"b4_g128_m1_n256_k4096", Tier::Full, {4, 128, 1, 4096, 256, false}, {DType::F32}});
  // Groups that end inside a qweight word: shorter than a word (4 of its 8 4-bit codes), and 1.5 words
  // (12 codes), which a kernel walking whole words per group would get wrong.
  v.push_back({"b4_g4_m1_n40_k256", Tier::Ci, {4, 4, 1, 256, 40, false}});
  v.push_back({"b4_g12_m7_n40_k264", Tier::Ci, {4, 12, 7, 264, 40, false}});
  return v;
}

}  // namespace

const Op& op_gemm_gptq() {
  static const TypedOp<GptqParams> op({
      .name = "gemm_gptq",
      .family = "quant",
      .summary = "out[m,n] = a[m,k] @ (scales[g,n] * (q[k,n] - zeros[g,n])), AutoGPTQ packing, act-order via g_idx",
      .tensors = [](const GptqParams& p) {
        const int64_t per = 32 / p.bits;
        std::vector d{in("a", {p.m, p.k}), pinned(in("qweight", {p.k / per, p.n}), DType::I32),
                      pinned(in("scales", {groups(p), p.n}), DType::F16),
                      pinned(in("qzeros", {groups(p), p.n / per}), DType::I32)};
        if (p.desc_act) d.push_back(pinned(in("g_idx", {p.k}), DType::I32));
        d.push_back(out("out", {p.m, p.n}));
        return d;
      },
      .validate_params = check_params,
      .validate_data = [](const GptqParams& p, const TensorMap& t) {
        if (!p.desc_act) return;
        const int32_t* g = t.at("g_idx").as<int32_t>();
        for (int64_t i = 0; i < p.k; ++i)
          check(g[i] >= 0 && g[i] < groups(p), "tensor 'g_idx': element {} is {}, outside [0, {}) (k / group_size groups)",
                i, g[i], groups(p));
      },
      .generate = [](const GptqParams& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        random_bytes(t["qweight"], r);  // every code
        random_bytes(t["qzeros"], r);   // every stored zero, all ones (2^bits) included
        quant_gemm::f16_scales(t["scales"], p.bits, r);
        if (p.desc_act) act_order(p, t["g_idx"], r);
      },
      .tolerance = [](const GptqParams& p, DType dt, const TensorMap& in) {
        return quant_gemm::tolerance(dt, p.k, magnitude::max_abs(in, "a"), quant_gemm::gptq_max_abs(p, in));
      },
      .cost = [](const GptqParams& p, DType dt) {
        const double w = static_cast<double>(p.k) * static_cast<double>(p.n) * static_cast<double>(p.bits) / 8 +
                         static_cast<double>(groups(p)) * static_cast<double>(p.n) * (2 + static_cast<double>(p.bits) / 8) +
                         (p.desc_act ? 4.0 * static_cast<double>(p.k) : 0.0);
        return quant_gemm::cost(w, p.m, p.n, p.k, dt);
      },
      .cases = cases(),
      .benches = {{"b4_g128_m1_n4096_k4096", Tier::Full, {4, 128, 1, 4096, 4096, false}, {DType::F32}},
                  {"b4_g128_act_m1_n4096_k4096", Tier::Full, {4, 128, 1, 4096, 4096, true}, {DType::F32}},
                  {"b8_g128_m1_n4096_k4096", Tier::Full, {8, 128, 1, 4096, 4096, false}, {DType::F32}},
                  {"b4_g128_m512_n4096_k4096", Tier::Full, {4, 128, 512, 4096, 4096, false}, {DType::F32}}},
  });
  return op;
}

}  // namespace ts
