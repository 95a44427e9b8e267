#pragma once
// Input generators and checks shared by the moe op descriptions: expert choices that exercise the
// classic routing bugs, combine weights, and the range checks on expert ids.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/ops/describe.h"

namespace ts::describe {

// The index-only ops (no activation tensor): one run, in F32, since the case dtype changes nothing.
inline const std::vector<DType> kIndexOnly = {DType::F32};

// top_k <= num_experts: a token cannot choose more distinct experts than there are.
inline void top_k_fits(const char* op, int64_t top_k, int64_t num_experts) {
  check(top_k <= num_experts, "{}: top_k {} is larger than num_experts {}", op, top_k, num_experts);
}

// Every I32 value of tensor `name` in [0, num_experts): an expert id past it is an Error, never a read.
inline void experts_in_range(const char* op, const TensorMap& t, const char* name, int64_t num_experts) {
  const Tensor& ids = t.at(name);
  const int32_t* v = ids.as<int32_t>();
  for (int64_t i = 0; i < ids.numel(); ++i)
    check(v[i] >= 0 && v[i] < num_experts, "{}: {}[{}] = {} is not an expert id: must be in [0, num_experts = {})",
          op, name, i, v[i], num_experts);
}

// Each token's top_k distinct experts, tokens cycling through three kinds so that every case of three
// or more tokens has many tokens on the same experts and (with enough experts) experts with none:
// token 0, 3, ...: the same hot experts 0..top_k-1, in a rotating order; token 1, 4, ...: experts from
// the lower half only; token 2, 5, ...: the last expert first, then any others.
inline void expert_choices(Tensor& ids, int64_t batch, int64_t top_k, int64_t num_experts, Rng& r) {
  int32_t* v = ids.as<int32_t>();
  std::vector<int32_t> pool(static_cast<size_t>(num_experts));
  for (int64_t t = 0; t < batch; ++t) {
    int32_t* row = v + t * top_k;
    if (t % 3 == 0) {
      for (int64_t s = 0; s < top_k; ++s) row[s] = static_cast<int32_t>((s + t / 3) % top_k);
      continue;
    }
    const int64_t n = t % 3 == 1 ? std::max(top_k, num_experts / 2) : num_experts;
    std::iota(pool.begin(), pool.begin() + n, 0);
    if (t % 3 == 2) std::swap(pool[0], pool[static_cast<size_t>(n - 1)]);
    // A partial Fisher-Yates shuffle; slot 0 of a last-expert-first token stays put.
    for (int64_t s = t % 3 == 2 ? 1 : 0; s < top_k; ++s)
      std::swap(pool[static_cast<size_t>(s)], pool[static_cast<size_t>(s + r.below(n - s))]);
    std::copy(pool.begin(), pool.begin() + top_k, row);
  }
}

// Combine weights as a router gives them: positive, each row of `k` summing to 1.
inline void combine_weights(Tensor& w, int64_t rows, int64_t k, Rng& r) {
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<double> row(static_cast<size_t>(k));
    double sum = 0;
    for (auto& x : row) sum += (x = r.uniform(0.05, 1.0));
    for (int64_t s = 0; s < k; ++s) w.set(i * k + s, row[static_cast<size_t>(s)] / sum);
  }
}

// A weighted sum of `terms` products w * slot (and, with `residual`, the residual itself), then one
// output rounding; each term bounded by the case's max|weights| x max|slots| (max|residual|).
inline Tolerance combine_tolerance(DType out, int64_t terms, const TensorMap& in, bool residual = false) {
  const double products = magnitude::max_abs(in, "weights") * magnitude::max_abs(in, "slots");
  if (!residual) return tol::accumulation(out, double(terms), products, "max|weights| x max|slots|");
  return tol::accumulation(out, double(terms), std::max(products, magnitude::max_abs(in, "residual")),
                           "max(max|weights| x max|slots|, max|residual|)");
}

// The shapes (n_slots = a token's top_k, hidden) every stacked weighted sum is tried at, and its
// model presets: Mixtral 8x7B (top 2, hidden 4096), Qwen3-30B-A3B (top 8, 2048), DeepSeek-V2-Lite (top
// 6, 2048), one decode step.
template <class P> std::vector<Preset<P>> stacked_cases() {
  return {
      {"s1_h1", Tier::Smoke, {1, 1}},
      {"s2_h7", Tier::Smoke, {2, 7}},
      {"s8_h33", Tier::Ci, {8, 33}},
      {"s6_h257", Tier::Ci, {6, 257}},
      {"s8_h1000", Tier::Ci, {8, 1000}},
      {"qwen3_30b_a3b_s8_h2048", Tier::Ci, {8, 2048}},
      {"deepseek_v2_lite_s6_h2048", Tier::Ci, {6, 2048}},
      {"mixtral_8x7b_s2_h4096", Tier::Ci, {2, 4096}},
  };
}
template <class P> std::vector<Preset<P>> stacked_benches() {
  return {
      {"mixtral_8x7b_b1", Tier::Full, {2, 4096}},
      {"qwen3_30b_a3b_b1", Tier::Full, {8, 2048}},
      {"deepseek_v2_lite_b1", Tier::Full, {6, 2048}},
  };
}

}  // namespace ts::describe
