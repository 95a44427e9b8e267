// moe_align_block_size: vLLM's fused-MoE alignment. topk_ids I32 [batch, top_k] -> sorted_token_ids I32
// [batch*top_k + E*(block_size-1)], expert_ids I32 [ceil(that / block_size)], num_tokens_post_padded
// I32 [1]: expert by expert in id order, the flat indices of topk_ids routed to it, ascending, padded
// to a multiple of block_size with the sentinel batch*top_k; expert_ids[b] is block b's expert. Slots
// past num_tokens_post_padded (and their blocks) are left unwritten (not compared).
#include "core/ops/moe/moe_inputs.h"
#include "core/ops/moe_params.h"

namespace ts {
using namespace describe;

namespace {
MoeAlignBlockSizeParams align(int64_t batch, int64_t num_experts, int64_t top_k, int64_t block_size) {
  return {num_experts, block_size, batch, top_k};
}

// The most experts the alignment takes (the largest models have a few hundred).
constexpr int64_t kMaxAlignExperts = 65536;

int64_t pairs(const MoeAlignBlockSizeParams& p) { return checked::mul(p.batch, p.top_k, "batch * top_k"); }
// The most slots the padding can need: every expert one short of a full block.
int64_t max_padded(const MoeAlignBlockSizeParams& p) {
  return checked::add(pairs(p), checked::mul(p.num_experts, p.block_size - 1, "num_experts * (block_size - 1)"),
                      "batch * top_k + num_experts * (block_size - 1)");
}
int64_t max_blocks(const MoeAlignBlockSizeParams& p) { return (max_padded(p) + p.block_size - 1) / p.block_size; }

// Slots at or past the reference's num_tokens_post_padded, counted in units of `per`.
void unwritten_past_padded(const TensorMap& expected, int64_t per, std::vector<uint8_t>& mask) {
  const int64_t used = expected.at("num_tokens_post_padded").as<int32_t>()[0] / per;
  for (size_t i = static_cast<size_t>(used); i < mask.size(); ++i) mask[i] = 0;
}
}  // namespace

const Op& op_moe_align_block_size() {
  static const TypedOp<MoeAlignBlockSizeParams> op({
      .name = "moe_align_block_size",
      .family = "moe",
      .summary = "vLLM's fused-MoE alignment: pair indices grouped by expert, padded to block_size",
      .tensors = [](const MoeAlignBlockSizeParams& p) {
        return std::vector{pinned(in("topk_ids", {p.batch, p.top_k}), DType::I32),
                           pinned(out("sorted_token_ids", {max_padded(p)}), DType::I32),
                           pinned(out("expert_ids", {max_blocks(p)}), DType::I32),
                           pinned(out("num_tokens_post_padded", {1}), DType::I32)};
      },
      .validate_params = [](const MoeAlignBlockSizeParams& p) {
        positive(p.num_experts, "num_experts");
        positive(p.block_size, "block_size");
        positive(p.batch, "batch (topk_ids' rows)");
        positive(p.top_k, "top_k (topk_ids' columns)");
        top_k_fits("moe_align_block_size", p.top_k, p.num_experts);
        // No tensor has num_experts elements here, so nothing else bounds it: every implementation keeps
        // a counter per expert (vLLM's kernels in shared memory), and scans them all.
        check(p.num_experts <= kMaxAlignExperts,
              "moe_align_block_size: num_experts {} is more than the {} per-expert counters an implementation keeps",
              p.num_experts, kMaxAlignExperts);
        check(max_padded(p) <= INT32_MAX, "moe_align_block_size: {} padded slots do not fit an I32 index",
              max_padded(p));
      },
      .validate_data = [](const MoeAlignBlockSizeParams& p, const TensorMap& t) {
        experts_in_range("moe_align_block_size", t, "topk_ids", p.num_experts);
      },
      .infer = [](MoeAlignBlockSizeParams& p, const TensorMap& t) {
        p.batch = dim_of(t, "topk_ids", 2, 0);
        p.top_k = dim_of(t, "topk_ids", 2, 1);
      },
      .generate = [](const MoeAlignBlockSizeParams& p, TensorMap& t, Rng& r) {
        expert_choices(t["topk_ids"], p.batch, p.top_k, p.num_experts, r);
      },
      .tolerance = [](const MoeAlignBlockSizeParams&, DType, const TensorMap&) { return Tolerance{0, 0, "indices: exact"}; },
      .outputs = {{"sorted_token_ids", {},
                   [](const MoeAlignBlockSizeParams&, const TensorMap&, const TensorMap& expected,
                      std::vector<uint8_t>& mask) { unwritten_past_padded(expected, 1, mask); }},
                  {"expert_ids", {},
                   [](const MoeAlignBlockSizeParams& p, const TensorMap&, const TensorMap& expected,
                      std::vector<uint8_t>& mask) { unwritten_past_padded(expected, p.block_size, mask); }}},
      .cost = [](const MoeAlignBlockSizeParams& p, DType) {
        const double n = double(pairs(p));
        return Cost{n + double(p.num_experts), 4.0 * (n + double(max_padded(p)) + double(max_blocks(p)) + 1.0)};
      },
      // Tokens cycle through hot experts, the lower half and the last expert (moe_inputs.h): experts
      // with several blocks, with a partial one and with none.
      .cases = {
          {"b1_e8_k1_bs16", Tier::Smoke, align(1, 8, 1, 16), kIndexOnly},
          {"b7_e8_k2_bs16", Tier::Smoke, align(7, 8, 2, 16), kIndexOnly},
          {"b33_e8_k8_bs16", Tier::Ci, align(33, 8, 8, 16), kIndexOnly},  // hot experts past one block
          {"b33_e8_k2_bs32", Tier::Ci, align(33, 8, 2, 32), kIndexOnly},
          {"b7_e64_k6_bs64", Tier::Ci, align(7, 64, 6, 64), kIndexOnly},
          {"b33_e64_k6_bs16", Tier::Ci, align(33, 64, 6, 16), kIndexOnly},
          {"b1_e128_k8_bs32", Tier::Ci, align(1, 128, 8, 32), kIndexOnly},
          {"b33_e128_k8_bs64", Tier::Ci, align(33, 128, 8, 64), kIndexOnly},
          {"b7_e128_k1_bs16", Tier::Ci, align(7, 128, 1, 16), kIndexOnly},
          {"b33_e7_k3_bs1", Tier::Ci, align(33, 7, 3, 1), kIndexOnly},  // block size 1: no padding at all
      },
      .benches = {
          {"mixtral_8x7b_b16_bs16", Tier::Full, align(16, 8, 2, 16), kIndexOnly},
          {"mixtral_8x7b_b512_bs64", Tier::Full, align(512, 8, 2, 64), kIndexOnly},
          {"qwen3_30b_a3b_b16_bs16", Tier::Full, align(16, 128, 8, 16), kIndexOnly},
          {"qwen3_30b_a3b_b512_bs64", Tier::Full, align(512, 128, 8, 64), kIndexOnly},
          {"deepseek_v2_lite_b16_bs16", Tier::Full, align(16, 64, 6, 16), kIndexOnly},
          {"deepseek_v2_lite_b512_bs64", Tier::Full, align(512, 64, 6, 64), kIndexOnly},
      },
  });
  return op;
}

}  // namespace ts
