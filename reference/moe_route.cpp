// Reference: the MoE routing ops (route_topk_softmax, compute_ids_tpe, moe_align_block_size).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "reference/reference.h"

namespace ts::ref {

void route_topk_softmax(const RouteTopkSoftmaxParams& p, TensorMap& t) {
  const auto logits = to_f64(t.at("logits"));
  int32_t* ids = t.at("out_ids").as<int32_t>();
  Tensor& weights = t.at("out_weights");
  const int64_t E = p.num_experts;
  for (int64_t r = 0; r < p.batch; ++r) {
    const double* row = &logits[r * E];
    double max = row[0];
    for (int64_t e = 1; e < E; ++e) max = std::fmax(max, row[e]);
    double sum = 0;
    for (int64_t e = 0; e < E; ++e) sum += std::exp(row[e] - max);

    // Selection by the logits themselves, strictly greater, so equal logits rank the lower id first.
    // A NaN logit never wins; when only NaN are left the lowest unchosen id is taken (docs/catalog.md leaves it open).
    std::vector<bool> chosen(static_cast<size_t>(E), false);
    std::vector<double> w(static_cast<size_t>(p.top_k));
    double chosen_sum = 0;
    for (int64_t k = 0; k < p.top_k; ++k) {
      int64_t best = -1;
      for (int64_t e = 0; e < E; ++e)
        if (!chosen[e] && (best < 0 || row[e] > row[best] || (std::isnan(row[best]) && !std::isnan(row[e])))) best = e;
      chosen[best] = true;
      ids[r * p.top_k + k] = static_cast<int32_t>(best);
      chosen_sum += w[k] = std::exp(row[best] - max) / sum;
    }
    for (int64_t k = 0; k < p.top_k; ++k)
      weights.set(r * p.top_k + k, p.norm_topk_prob ? w[k] / chosen_sum : w[k]);
  }
}

void compute_ids_tpe(const ComputeIdsTpeParams& p, TensorMap& t) {
  const int32_t* selected = t.at("selected_ids").as<int32_t>();
  int32_t* tpe = t.at("tpe").as<int32_t>();
  int32_t* ids = t.at("ids").as<int32_t>();
  const int64_t pairs = p.batch * p.top_k;
  for (int64_t e = 0; e < p.num_experts; ++e) tpe[e] = 0;
  // Pairs in order, so each expert's row comes out ascending; slots past tpe[e] are not written.
  for (int64_t pair = 0; pair < pairs; ++pair) {
    const int64_t e = selected[pair];
    ids[e * pairs + tpe[e]++] = static_cast<int32_t>(pair);
  }
}

void moe_align_block_size(const MoeAlignBlockSizeParams& p, TensorMap& t) {
  const int32_t* topk_ids = t.at("topk_ids").as<int32_t>();
  int32_t* sorted = t.at("sorted_token_ids").as<int32_t>();
  int32_t* expert_ids = t.at("expert_ids").as<int32_t>();
  const int64_t n = p.batch * p.top_k, bs = p.block_size;
  const auto sentinel = static_cast<int32_t>(n);
  // Each expert's pairs in pair order from its first slot, its count rounded up to whole blocks (an
  // expert with no pairs gets no block, as vLLM rounds): a counting sort, O(pairs + experts).
  std::vector<int64_t> count(static_cast<size_t>(p.num_experts), 0), next(count.size(), 0);
  for (int64_t i = 0; i < n; ++i) ++count[static_cast<size_t>(topk_ids[i])];
  int64_t at = 0;
  for (int64_t e = 0; e < p.num_experts; ++e) {
    next[e] = at;
    const int64_t padded = (count[e] + bs - 1) / bs * bs;
    std::fill(sorted + at + count[e], sorted + at + padded, sentinel);
    std::fill(expert_ids + at / bs, expert_ids + (at + padded) / bs, static_cast<int32_t>(e));
    at += padded;
  }
  for (int64_t i = 0; i < n; ++i) sorted[next[static_cast<size_t>(topk_ids[i])]++] = static_cast<int32_t>(i);
  // Slots and blocks past this count are left as they were (vLLM leaves them to the caller's fill).
  t.at("num_tokens_post_padded").as<int32_t>()[0] = static_cast<int32_t>(at);
}

}  // namespace ts::ref
