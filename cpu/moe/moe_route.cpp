// The MoE routing ops on the cpu: route_topk_softmax (tokens split across threads), compute_ids_tpe
// and moe_align_block_size (one pass over the pairs: a few thousand at most, below any thread's worth).
// Scalar: top_k selection and bucketing are branches and counters, not arithmetic.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/ops/moe_params.h"
#include "cpu/kernels.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/scratch.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
namespace {

// One token: softmax in F32 from the max, top_k by the logits themselves (strictly greater, so equal
// logits keep the lower id; a NaN ranks below every number, NaNs among themselves by id), weights
// renormalised over the chosen when asked.
void route_row(const float* logits, int64_t E, int64_t top_k, bool norm, int32_t* ids, float* weights,
               ScratchVector<uint8_t>& chosen) {
  float max = logits[0];
  for (int64_t e = 1; e < E; ++e) max = std::fmax(max, logits[e]);
  float sum = 0;
  for (int64_t e = 0; e < E; ++e) sum += std::exp(logits[e] - max);
  std::fill(chosen.begin(), chosen.end(), 0);
  float chosen_sum = 0;
  for (int64_t k = 0; k < top_k; ++k) {
    int64_t best = -1;
    for (int64_t e = 0; e < E; ++e)
      if (!chosen[e] && (best < 0 || logits[e] > logits[best] || (std::isnan(logits[best]) && !std::isnan(logits[e]))))
        best = e;
    chosen[best] = 1;
    ids[k] = static_cast<int32_t>(best);
    chosen_sum += weights[k] = std::exp(logits[best] - max) / sum;
  }
  if (norm)
    for (int64_t k = 0; k < top_k; ++k) weights[k] /= chosen_sum;
}

}  // namespace

void add_moe_route(KernelTable& k) {
  k.add(ops::route_topk_softmax, [](const RouteTopkSoftmaxParams& p, TensorMap& t) {
    const Tensor& logits = tensor(t, "logits");
    int32_t* ids = tensor(t, "out_ids").as<int32_t>();
    float* weights = tensor(t, "out_weights").as<float>();
    const int64_t E = p.num_experts;
    parallel_for(p.batch, std::max<int64_t>(1, 16384 / E), [&](int64_t r0, int64_t r1) {
      ScratchVector<float> row(static_cast<size_t>(E));
      ScratchVector<uint8_t> chosen(static_cast<size_t>(E));
      for (int64_t r = r0; r < r1; ++r) {
        to_f32(logits.dtype(), logits.data() + r * E * dtype_size(logits.dtype()), row.data(), E);
        route_row(row.data(), E, p.top_k, p.norm_topk_prob, ids + r * p.top_k, weights + r * p.top_k, chosen);
      }
    });
  });
  k.add(ops::compute_ids_tpe, [](const ComputeIdsTpeParams& p, TensorMap& t) {
    const int32_t* selected = tensor(t, "selected_ids").as<int32_t>();
    int32_t* tpe = tensor(t, "tpe").as<int32_t>();
    int32_t* ids = tensor(t, "ids").as<int32_t>();
    const int64_t pairs = p.batch * p.top_k;
    std::fill(tpe, tpe + p.num_experts, 0);
    for (int64_t pair = 0; pair < pairs; ++pair) {
      const int64_t e = selected[pair];
      ids[e * pairs + tpe[e]++] = static_cast<int32_t>(pair);
    }
  });
  k.add(ops::moe_align_block_size, [](const MoeAlignBlockSizeParams& p, TensorMap& t) {
    const int32_t* topk_ids = tensor(t, "topk_ids").as<int32_t>();
    int32_t* sorted = tensor(t, "sorted_token_ids").as<int32_t>();
    int32_t* expert_ids = tensor(t, "expert_ids").as<int32_t>();
    const int64_t n = p.batch * p.top_k, bs = p.block_size, E = p.num_experts;
    // Counts, then each expert's first slot (counts rounded up to whole blocks), then one placing pass.
    std::vector<int64_t> start(static_cast<size_t>(E + 1), 0), next;
    for (int64_t i = 0; i < n; ++i) ++start[topk_ids[i] + 1];
    for (int64_t e = 0; e < E; ++e) start[e + 1] = start[e] + (start[e + 1] + bs - 1) / bs * bs;
    next.assign(start.begin(), start.end() - 1);
    for (int64_t i = 0; i < n; ++i) sorted[next[topk_ids[i]]++] = static_cast<int32_t>(i);
    for (int64_t e = 0; e < E; ++e) {
      std::fill(sorted + next[e], sorted + start[e + 1], static_cast<int32_t>(n));
      std::fill(expert_ids + start[e] / bs, expert_ids + start[e + 1] / bs, static_cast<int32_t>(e));
    }
    tensor(t, "num_tokens_post_padded").as<int32_t>()[0] = static_cast<int32_t>(start[E]);
  });
}

}  // namespace ts::cpu
