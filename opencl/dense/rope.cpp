// The qk-norm / RoPE ops and the fused split: all one kernel (kernels/rope.cl) at different strides;
// the tensor family's RoPE from positions: rope.cl's rope_positions.
#include "opencl/dense/split_rope.h"

#include <algorithm>
#include <cstring>

#include "core/ops/tensor/rope_angle.h"
#include "core/ops/tensor_params.h"
#include "opencl/kernels/rope_args.h"

namespace ts::ocl {
namespace {

struct NormRope {
  int64_t tokens, heads, hd, rotary_dim, mode, pos_offset;
  float eps;
  std::string norm_w;             // may be any tensor when mode != 1 (never read)
  cl_mem positions;               // null: pos_offset + token
};

void norm_rope(Planner& pl, const NormRope& n, const View& src, const View& dst) {
  const size_t g = pl.reduction_group(n.hd, 128);
  const int64_t rot = n.rotary_dim ? n.rotary_dim : n.hd;
  const cl_mem any = pl.buf(src.name);  // bound where the variant reads nothing
  const PagedDst* pd = dst.paged;
  NormRopeArgsIn a;
  a.src_off = src.off, a.src_tok_stride = src.tok_stride, a.src_head_stride = src.head_stride;
  a.dst_off = dst.off, a.dst_tok_stride = dst.tok_stride, a.dst_head_stride = dst.head_stride;
  a.use_positions = n.positions != nullptr, a.pos_offset = n.pos_offset, a.mode = n.mode, a.hd = n.hd;
  a.rotary_dim = rot, a.eps = n.eps;
  a.table_width = pd ? pd->table_width : 0, a.block_size = pd ? pd->block_size : 1, a.kx = pd ? pd->x : 1;
  pl.dispatch(pl.kernel("rope.cl", "norm_rope", pd ? fmt::format("-DDST={}", static_cast<uint32_t>(pd->dest)) : ""),
              {g, size_t(n.tokens), size_t(n.heads)}, {g, 1, 1}, pl.args(pack(a)), pl.buf(src.name),
              pl.buf(dst.name), pl.buf(n.norm_w), pl.buf("cos"), pl.buf("sin"), n.positions ? n.positions : any,
              pd ? pd->pos : any, pd ? pd->seq : any, pd ? pl.buf(pd->tables) : any,
              LocalBytes{size_t(n.hd + int64_t(g)) * sizeof(float)});
}

// apply_rope_positions / apply_rope_partial: rope.cl's rope_positions, the angle table of
// core/ops/tensor/rope_angle.h built on the host from the parameters (never from the positions).
// Planner::ints holds 32-bit words: the table's U32 words travel as their bits.
void plan_rope_positions(Planner& pl, const RopePositionsParams& p, int64_t rot) {
  const std::vector<uint32_t> words = rope_angle::turn_words(p.base, rot);
  std::vector<int32_t> bits(words.size());
  std::memcpy(bits.data(), words.data(), words.size() * sizeof(uint32_t));
  const int64_t slots = p.head_dim - rot / 2;  // rot/2 pairs, then the copied channels
  pl.dispatch(pl.kernel("rope.cl", "rope_positions"), {size_t(slots), size_t(p.heads), size_t(p.seq)}, {
                  std::min<size_t>(64, size_t(slots)), 1, 1},
              pl.buf("x"), pl.buf("positions"), pl.ints(bits), pl.buf("out"), p.heads, p.head_dim, rot);
}

}  // namespace

void split_norm_rope(Planner& pl, const SplitQkvNormRopeParams& p, int64_t qkv_off, const View& q_dst,
                     const View& k_dst, const View& v_dst, cl_mem positions) {
  const int64_t hd = p.head_dim, row = (p.q_heads + 2 * p.kv_heads) * hd;
  NormRope n{p.tokens, p.q_heads, hd, p.rotary_dim, p.qk_mode, p.pos_offset, p.eps, "q_norm_w", positions};
  norm_rope(pl, n, {"qkv", qkv_off, row, hd}, q_dst);
  n.heads = p.kv_heads;
  n.norm_w = "k_norm_w";
  norm_rope(pl, n, {"qkv", qkv_off + p.q_heads * hd, row, hd}, k_dst);
  n.mode = 0;  // v is only moved
  norm_rope(pl, n, {"qkv", qkv_off + (p.q_heads + p.kv_heads) * hd, row, hd}, v_dst);
}

void add_rope_ops(PlanTable& t) {
  add_plan(t, ops::apply_rope_positions, [](Planner& pl) {
    const auto& p = pl.params<RopePositionsParams>();
    plan_rope_positions(pl, p, p.head_dim);
  });
  add_plan(t, ops::apply_rope_partial, [](Planner& pl) {
    const auto& p = pl.params<RopePartialParams>();
    plan_rope_positions(pl, p, p.rotary_dim);
  });
  add_plan(t, ops::qk_norm_rope, [](Planner& pl) {
    const auto& p = pl.params<QkNormRopeParams>();
    const int64_t hd = p.head_dim;
    norm_rope(pl, {p.tokens, p.heads, hd, p.rotary_dim, p.mode, p.pos_offset, p.eps, "norm_w", nullptr},
              {"input", 0, p.heads * hd, hd}, {"output", 0, hd, p.tokens * hd});
  });
  add_plan(t, ops::qk_norm_rope_batched_per_item, [](Planner& pl) {
    const auto& p = pl.params<QkNormRopeBatchedPerItemParams>();
    const int64_t hd = p.head_dim;
    norm_rope(pl, {p.m, p.heads, hd, p.rotary_dim, p.mode, 0, p.eps, "norm_w", pl.buf("positions")},
              {"input", 0, p.heads * hd, hd}, {"output", 0, p.heads * hd, hd});
  });
  add_plan(t, ops::split_qkv_norm_rope, [](Planner& pl) {
    const auto& p = pl.params<SplitQkvNormRopeParams>();
    const int64_t hd = p.head_dim;
    split_norm_rope(pl, p, 0, {"q_out", 0, hd, p.tokens * hd}, {"k_out", 0, hd, p.tokens * hd},
                    {"v_out", 0, hd, p.tokens * hd});
  });
  add_plan(t, ops::split_qkv_norm_rope_into_cache, [](Planner& pl) {
    const auto& p = pl.params<SplitQkvNormRopeIntoCacheParams>();
    const int64_t hd = p.head_dim, cap = p.cache_capacity * hd;
    split_norm_rope(pl, p, 0, {"q_out", 0, hd, p.tokens * hd}, {"cache_k", p.cache_len * hd, hd, cap},
                    {"cache_v", p.cache_len * hd, hd, cap});
  });
}

}  // namespace ts::ocl
