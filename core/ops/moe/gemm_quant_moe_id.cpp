// gemm_quant_moe_id: the prefill expert GEMM, every expert in one launch. ids [num_experts,
// max_per_expert] lists in row e the pair ids p = t * top_k + s routed to expert e, in any order, the
// first tpe[e] valid (slots past tpe[e] hold stale values that must not be read);
// out[t, s, :] = a_row @ dequant(weights[e])^T with a_row = a[t] (ne11 1, a [batch, n_cols]) or
// a[t, s] (ne11 top_k, a [batch, top_k, n_cols]). A pair no expert lists (tpe summing below
// batch x top_k: pairs dropped past an expert's capacity) is left unwritten and not compared; a pair
// listed twice is refused (two writers of one row).
#include <algorithm>
#include <limits>

#include "core/ops/describe.h"
#include "core/ops/moe/experts_common.h"
#include "core/ops/moe/pair_view.h"

namespace ts {
using namespace describe;

namespace {

using P = GemmQuantMoeIdParams;

P gemm(QuantKind kind, int64_t experts, int64_t n_rows, int64_t n_cols, int64_t ne11, int64_t top_k,
       int64_t max_per_expert, int64_t batch) {
  return {{kind, experts, n_rows, n_cols}, ne11, top_k, max_per_expert, batch};
}

std::vector<Preset<P>> cases() {
  using enum QuantKind;
  return {
      {"Q4_0_e8_r5_k64_top2_b7_gate", Tier::Smoke, gemm(Q4_0, 8, 5, 64, 1, 2, 14, 7)},
      {"Q8_0_e8_r4_k96_top2_b33_down", Tier::Ci, gemm(Q8_0, 8, 4, 96, 2, 2, 66, 33)},  // ~8 pairs per expert
      {"Q4_K_e64_r3_k256_top8_b5_gate", Tier::Ci, gemm(Q4_K, 64, 3, 256, 1, 8, 5, 5)},
      {"Q6_K_e128_r2_k256_top8_b4_down", Tier::Ci, gemm(Q6_K, 128, 2, 256, 8, 8, 32, 4), {DType::F32}},
      // Experts 0 and 1 take about half the pairs: their lists stop at 3, the rest stay unwritten.
      {"Q4_0_e8_r3_k32_top2_b16_capacity3", Tier::Ci, gemm(Q4_0, 8, 3, 32, 1, 2, 3, 16)},
      {"Q8_0_e8_r3_k64_top1_b12_gate", Tier::Ci, gemm(Q8_0, 8, 3, 64, 1, 1, 12, 12)},
      {"F32_e8_r6_k40_top2_b9_down", Tier::Ci, gemm(F32, 8, 6, 40, 2, 2, 18, 9), {DType::F32}},
      {"F16_e64_r4_k24_top8_b3_gate", Tier::Ci, gemm(F16, 64, 4, 24, 1, 8, 3, 3), {DType::F16}},
      {"BF16_e8_r5_k33_top2_b5_gate", Tier::Ci, gemm(BF16, 8, 5, 33, 1, 2, 10, 5), {DType::BF16}},
  };
}

// Prefill of 512 tokens, each model's gate projection; ids rows of batch x top_k slots, as the seed sizes them.
std::vector<Preset<P>> benches() {
  std::vector<Preset<P>> v;
  for (const auto& [m, k] : moe_experts::bench_models())
    v.push_back({moe_experts::bench_name(m, k, "t512"), Tier::Full,
                 gemm(k, m.experts, m.ffn, m.hidden, 1, m.top_k, 512 * m.top_k, 512), moe_experts::bench_dtypes(k)});
  return v;
}

int64_t pairs(const P& p) { return p.batch * p.top_k; }

void check_lists(const P& p, const TensorMap& t) {
  const int32_t* ids = t.at("ids").as<int32_t>();
  const int32_t* tpe = t.at("tpe").as<int32_t>();
  int64_t total = 0;
  for (int64_t e = 0; e < p.w.num_experts; ++e) {
    check(tpe[e] >= 0 && tpe[e] <= p.max_per_expert, "tpe[{}] = {} must be in [0, max_per_expert = {}]", e, tpe[e],
          p.max_per_expert);
    total += tpe[e];
    check(total <= pairs(p), "tpe sums past the pair count batch x top_k = {} (at expert {})", pairs(p), e);
  }
  std::vector<uint8_t> seen(static_cast<size_t>(pairs(p)));
  for (int64_t e = 0; e < p.w.num_experts; ++e)
    for (int64_t i = 0; i < tpe[e]; ++i) {
      const int32_t pair = ids[e * p.max_per_expert + i];
      check(pair >= 0 && pair < pairs(p), "ids[{}, {}] = {} is not a pair id: must be in [0, batch x top_k = {})", e, i,
            pair, pairs(p));
      check(!seen[static_cast<size_t>(pair)], "ids[{}, {}] = {}: pair listed twice", e, i, pair);
      seen[static_cast<size_t>(pair)] = 1;
    }
}

// Each token's top_k experts from the skewed router, bucketed by expert in shuffled order, at most
// max_per_expert per expert (the rest dropped); stale slots hold values no pair id takes.
void generate_lists(const P& p, TensorMap& t, Rng& r) {
  std::vector<int32_t> chosen(static_cast<size_t>(pairs(p)));
  moe_experts::route(p.batch, p.top_k, p.w.num_experts, chosen.data(), r);
  int32_t* ids = t["ids"].as<int32_t>();
  int32_t* tpe = t["tpe"].as<int32_t>();
  constexpr int32_t kStale[] = {std::numeric_limits<int32_t>::max(), -1, std::numeric_limits<int32_t>::min()};
  for (int64_t e = 0; e < p.w.num_experts; ++e) {
    std::vector<int32_t> list;
    for (int64_t q = 0; q < pairs(p); ++q)
      if (chosen[static_cast<size_t>(q)] == e) list.push_back(static_cast<int32_t>(q));
    for (size_t i = list.size(); i > 1; --i) std::swap(list[i - 1], list[static_cast<size_t>(r.below(int64_t(i)))]);
    list.resize(std::min<size_t>(list.size(), static_cast<size_t>(p.max_per_expert)));
    tpe[e] = static_cast<int32_t>(list.size());
    for (int64_t i = 0; i < p.max_per_expert; ++i)
      ids[e * p.max_per_expert + i] = i < tpe[e] ? list[static_cast<size_t>(i)]
                                      : i == tpe[e] ? static_cast<int32_t>(pairs(p))  // the first id past the range
                                                    : kStale[i % 3];
  }
}

}  // namespace

namespace moe_experts {

OpDef<P> gemm_def(std::string name, std::string summary) {
  return {
      .name = std::move(name),
      .family = "moe",
      .summary = std::move(summary),
      .tensors = [](const P& p) {
        const Shape a = p.ne11 == 1 ? Shape{p.batch, p.w.n_cols} : Shape{p.batch, p.top_k, p.w.n_cols};
        return std::vector{in("a", a), weights("weights", p.w),
                           pinned(in("ids", {p.w.num_experts, p.max_per_expert}), DType::I32),
                           pinned(in("tpe", {p.w.num_experts}), DType::I32), out("out", {p.batch, p.top_k, p.w.n_rows})};
      },
      .validate_params = [](const P& p) {
        moe_experts::check(p.w);
        positive(p.batch, "batch");
        positive(p.top_k, "top_k");
        positive(p.max_per_expert, "max_per_expert");
        check_top_k(p.top_k, p.w.num_experts);
        ts::check(p.ne11 == 1 || p.ne11 == p.top_k, "parameter 'ne11' = {} must be 1 (broadcast) or top_k = {}", p.ne11,
                  p.top_k);
        checked::mul(p.batch, p.top_k, "batch x top_k");
        checked::mul(p.w.num_experts, p.max_per_expert, "num_experts x max_per_expert");
      },
      .validate_data = [](const P& p, const TensorMap& t) {
        check_plain_kind(p.w, t);
        check_lists(p, t);
      },
      .infer = [](P& p, const TensorMap& t) { check_weight_bytes(t, "weights", p.w); },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["a"], r);
        fill_weights(p.w, t["weights"], r);
        generate_lists(p, t, r);
      },
      .tolerance = [](const P& p, DType dt, const TensorMap& in) { return dot(dt, p.w, in); },
      .outputs = {{"out", {}, [](const P& p, const TensorMap& in, const TensorMap&, std::vector<uint8_t>& mask) {
                     std::vector<uint8_t> listed(static_cast<size_t>(pairs(p)));
                     const int32_t* ids = in.at("ids").as<int32_t>();
                     const int32_t* tpe = in.at("tpe").as<int32_t>();
                     for (int64_t e = 0; e < p.w.num_experts; ++e)
                       for (int64_t i = 0; i < tpe[e]; ++i) listed[static_cast<size_t>(ids[e * p.max_per_expert + i])] = 1;
                     for (int64_t q = 0; q < pairs(p); ++q)
                       if (!listed[static_cast<size_t>(q)])
                         std::fill_n(mask.begin() + q * p.w.n_rows, p.w.n_rows, uint8_t{0});
                   }}},
      .cost = [](const P& p, DType dt) {
        return cost(p.w, dt, 1, selected_experts(p.w.num_experts, p.top_k, p.batch), pairs(p),
                    p.ne11 == 1 ? p.batch : pairs(p));
      },
      .view = [](const P& p) { return std::any(moe::pair_view(p)); },
      .cases = cases(),
      .benches = benches(),
  };
}

}  // namespace moe_experts

const Op& op_gemm_quant_moe_id() {
  static const TypedOp<P> op(moe_experts::gemm_def(
      "gemm_quant_moe_id", "out[t,s,:] = a[t or t,s] @ dequant(weights[e])^T for the pairs t*top_k+s in ids[e, :tpe[e]]"));
  return op;
}

}  // namespace ts
