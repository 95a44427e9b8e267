// The dense attention view each of flash_attention, mla_attention, flash_attention_batched_per_cache
// and gqa_attention states (core/ops/core/attention_view.h): pinned field by field for one parameter
// set each, and, for every conformance and benchmark case, its rows checked against the declared
// tensors (every key, value and query row the view addresses lies inside its tensor, and the last
// one ends it), so a wrong stride or layout in a description fails here before any backend runs it.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "core/op.h"
#include "core/ops/core/attention_view.h"
#include "core/ops/core_params.h"
#include "core/ops/op_refs.h"
#include "core/ops/tensor_params.h"
#include "core/ops/view_of.h"

namespace ts {
namespace {

using attn::DenseView;
using attn::KvRows;

TEST(DenseAttentionView, FlashAttentionIsHeadMajorWithItsKvStride) {
  const FlashAttentionParams p{.batch = 2, .q_len = 3, .kv_len = 61, .pos_offset = 58, .num_heads = 4,
                               .num_kv_heads = 2, .head_dim = 64, .causal = true, .scale = 0.125f,
                               .kv_seq_stride = 96, .sliding_window = 16};
  const DenseView v = view_of<DenseView>(ops::flash_attention, p);
  EXPECT_EQ(v.q, "q");
  EXPECT_EQ(v.out, "out");
  EXPECT_EQ(v.seqs, 2);
  EXPECT_EQ(v.num_heads, 4);
  EXPECT_EQ(v.kv_heads, 2);
  EXPECT_EQ(v.q_len, 3);
  EXPECT_EQ(v.head_rows, 3);
  EXPECT_EQ(v.pos_rows, 1);
  EXPECT_FALSE(v.token_major());
  // Rows of 64 from (b * 2 + h) * 96 * 64: the stride, not kv_len, separates the heads.
  EXPECT_EQ(v.k1, (KvRows{"k", 2 * 96 * 64, 96 * 64, 64}));
  EXPECT_EQ(v.v, (KvRows{"v", 2 * 96 * 64, 96 * 64, 64}));
  EXPECT_TRUE(v.k2.tensor.empty());
  EXPECT_FALSE(v.values_are_keys());
  EXPECT_EQ(v.dk1, 64);
  EXPECT_EQ(v.dk2, 0);
  EXPECT_EQ(v.dv, 64);
  EXPECT_EQ(v.scale, 0.125);
  EXPECT_TRUE(v.causal);
  EXPECT_EQ(v.window, 16);
  EXPECT_EQ(v.pos_offset, 58);
  EXPECT_EQ(v.kv_len, 61);
  EXPECT_TRUE(v.kv_lens.empty());
  EXPECT_EQ(v.row(1, 2, 1), (1 * 4 + 2) * 3 + 1);
  // Position 2 sits at 60: causal keys [0, 61), the window of 16 from 45.
  EXPECT_EQ(v.visible_keys(2, v.kv_len).begin, 45);
  EXPECT_EQ(v.visible_keys(2, v.kv_len).end, 61);
}

TEST(DenseAttentionView, MlaSharesOneLatentHeadWhoseRowsAreTheValues) {
  const MlaAttentionParams p{.batch = 2, .q_len = 8, .kv_len = 58, .pos_offset = 50, .num_heads = 3,
                             .causal = true, .scale = 0.1f, .kv_lora_rank = 64, .qk_rope_head_dim = 16};
  const DenseView v = view_of<DenseView>(ops::mla_attention, p);
  EXPECT_EQ(v.seqs, 2);
  EXPECT_EQ(v.num_heads, 3);
  EXPECT_EQ(v.kv_heads, 1);
  EXPECT_EQ(v.group(), 3);
  EXPECT_EQ(v.head_rows, 8);
  EXPECT_EQ(v.pos_rows, 1);
  EXPECT_EQ(v.k1, (KvRows{"kv_compressed", 58 * 64, 0, 64}));
  EXPECT_EQ(v.k2, (KvRows{"kv_rope", 58 * 16, 0, 16}));
  EXPECT_TRUE(v.values_are_keys());
  EXPECT_EQ(v.dk1, 64);
  EXPECT_EQ(v.dk2, 16);
  EXPECT_EQ(v.dqk(), 80);
  EXPECT_EQ(v.dv, 64);
  EXPECT_EQ(v.scale, double(0.1f));
  EXPECT_TRUE(v.causal);
  EXPECT_EQ(v.window, 0);
  EXPECT_EQ(v.pos_offset, 50);
  EXPECT_EQ(v.kv_len, 58);
  EXPECT_TRUE(v.kv_lens.empty());
}

TEST(DenseAttentionView, PerCacheReadsEachSequencesOwnCachesAndLength) {
  const FlashAttentionBatchedPerCacheParams p{.nq = 8, .nkv = 2, .hd = 128, .scale = 0.0625f, .capacity = 50, .m = 3};
  const DenseView v = view_of<DenseView>(ops::flash_attention_batched_per_cache, p);
  EXPECT_EQ(v.seqs, 3);
  EXPECT_EQ(v.num_heads, 8);
  EXPECT_EQ(v.kv_heads, 2);
  EXPECT_EQ(v.q_len, 1);
  EXPECT_EQ(v.k1, (KvRows{"k_caches.", 0, 50 * 128, 128, true}));
  EXPECT_EQ(v.v, (KvRows{"v_caches.", 0, 50 * 128, 128, true}));
  EXPECT_EQ(v.k1.name(2), "k_caches.2");
  EXPECT_EQ(v.k1.start(2, 1), 50 * 128);  // its own tensor: no sequence offset
  EXPECT_EQ(v.dk1, 128);
  EXPECT_EQ(v.dv, 128);
  EXPECT_FALSE(v.causal);
  EXPECT_EQ(v.window, 0);
  EXPECT_EQ(v.pos_offset, 0);
  EXPECT_EQ(v.kv_len, 50);  // the capacity: the most keys
  EXPECT_EQ(v.kv_lens, "kv_lens");
  EXPECT_EQ(v.row(2, 5, 0), 2 * 8 + 5);
  // Not causal: a sequence of 17 keys sees all 17.
  EXPECT_EQ(v.visible_keys(0, 17).begin, 0);
  EXPECT_EQ(v.visible_keys(0, 17).end, 17);
}

TEST(DenseAttentionView, GqaIsTokenMajorReadWhereItLies) {
  const GqaAttentionParams p{.seq_q = 5, .seq_kv = 33, .num_heads = 8, .num_kv_heads = 2, .head_dim = 128,
                             .causal = true};
  const DenseView v = view_of<DenseView>(ops::gqa_attention, p);
  EXPECT_EQ(v.seqs, 1);
  EXPECT_EQ(v.q_len, 5);
  EXPECT_EQ(v.head_rows, 1);
  EXPECT_EQ(v.pos_rows, 8);
  EXPECT_TRUE(v.token_major());
  // kv head h's row j at (j * 2 + h) * 128.
  EXPECT_EQ(v.k1, (KvRows{"k", 33 * 2 * 128, 128, 2 * 128}));
  EXPECT_EQ(v.v, (KvRows{"v", 33 * 2 * 128, 128, 2 * 128}));
  EXPECT_EQ(v.dk1, 128);
  EXPECT_EQ(v.dv, 128);
  EXPECT_EQ(v.scale, 1 / std::sqrt(128.0));
  EXPECT_TRUE(v.causal);
  EXPECT_EQ(v.pos_offset, 33 - 5);  // the last query at the last key
  EXPECT_EQ(v.kv_len, 33);
  EXPECT_EQ(v.row(0, 3, 4), 4 * 8 + 3);
  const GqaAttentionParams nc{.seq_q = 11, .seq_kv = 3, .num_heads = 2, .num_kv_heads = 1, .head_dim = 80};
  EXPECT_EQ(view_of<DenseView>(ops::gqa_attention, nc).pos_offset, 0);
  EXPECT_FALSE(view_of<DenseView>(ops::gqa_attention, nc).causal);
}

// The elements one past the last a K/V part addresses (the rows of every sequence, kv head and key
// up to kv_len, `width` elements each), per tensor it names.
void kv_extent(const DenseView& v, const KvRows& r, int64_t width, std::map<std::string, int64_t>& end) {
  for (int64_t b = 0; b < v.seqs; ++b)
    for (int64_t kh = 0; kh < v.kv_heads; ++kh) {
      int64_t& e = end[r.name(b)];
      e = std::max(e, r.start(b, kh) + (v.kv_len - 1) * r.row + width);
    }
}

// Every case of the four ops: the view's rows fill exactly the declared q and out, and end inside
// (for caches with spare rows) or at the end of each K/V tensor.
TEST(DenseAttentionView, EveryCasesRowsLieInsideItsTensors) {
  for (const char* name : {"flash_attention", "mla_attention", "flash_attention_batched_per_cache", "gqa_attention"}) {
    const Op& op = op_or_throw(name);
    for (const auto* list : {&op.cases(), &op.benches()})
      for (const CaseSpec& c : *list) {
        SCOPED_TRACE(fmt::format("{}.{}", name, c.name));
        const DenseView v = view_as<DenseView>(op, c.params);
        std::map<std::string, int64_t> numel;
        for (const TensorDecl& d : op.tensors(c.params, DType::F32)) numel[d.name] = shape_numel(d.shape);
        const int64_t last = v.row(v.seqs - 1, v.num_heads - 1, v.q_len - 1);
        EXPECT_EQ(last, v.seqs * v.num_heads * v.q_len - 1);  // the last row is the last of the rows
        EXPECT_EQ((last + 1) * v.dqk(), numel.at(v.q));
        EXPECT_EQ((last + 1) * v.dv, numel.at(v.out));
        std::map<std::string, int64_t> end;
        kv_extent(v, v.k1, v.dk1, end);
        if (!v.k2.tensor.empty()) kv_extent(v, v.k2, v.dk2, end);
        kv_extent(v, v.v, v.dv, end);
        for (const auto& [tensor, e] : end) {
          ASSERT_TRUE(numel.count(tensor)) << tensor << " is not declared";
          EXPECT_LE(e, numel.at(tensor)) << tensor;
          // A tensor's rows past kv_len are spare only where a stride or capacity says so.
          if (v.kv_lens.empty() && op.name() != "flash_attention") {
            EXPECT_EQ(e, numel.at(tensor)) << tensor;
          }
        }
        EXPECT_EQ(v.dqk(), v.dk1 + v.dk2);
        EXPECT_EQ(v.num_heads % v.kv_heads, 0);
      }
  }
}

}  // namespace
}  // namespace ts
