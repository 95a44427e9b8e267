// The qk-norm / RoPE ops and the fused split: all one kernel (kernels/rope.cl) at different strides.
#include "core/ops/core_params.h"
#include "plan.h"

namespace ts::ocl {
namespace {

// Where head vectors are read from or written to: element (token t, head h) starts at
// off + t * tok_stride + h * head_stride of tensor `name`.
struct View {
  std::string name;
  int64_t off, tok_stride, head_stride;
};

struct NormRope {
  int64_t tokens, heads, hd, rotary_dim, mode, pos_offset;
  float eps;
  std::string norm_w;             // may be any tensor when mode != 1 (never read)
  std::string positions;          // empty: pos_offset + token
};

void norm_rope(Planner& pl, const NormRope& n, const View& src, const View& dst) {
  const size_t g = pl.reduction_group(n.hd, 128);
  const int64_t rot = n.rotary_dim ? n.rotary_dim : n.hd;
  const bool use_pos = !n.positions.empty();
  pl.dispatch(pl.kernel("rope.cl", "norm_rope"), {g, size_t(n.tokens), size_t(n.heads)}, {g, 1, 1}, pl.buf(src.name),
              src.off, src.tok_stride, src.head_stride, pl.buf(dst.name), dst.off, dst.tok_stride, dst.head_stride,
              pl.buf(n.norm_w), pl.buf("cos"), pl.buf("sin"), pl.buf(use_pos ? n.positions : src.name),
              int64_t{use_pos}, n.pos_offset, n.mode, n.hd, rot, n.eps, LocalBytes{size_t(n.hd) * sizeof(float)},
              LocalBytes{g * sizeof(float)});
}

// qkv [tokens, (qh + 2 kvh) * hd] -> q_out [qh, tokens, hd]; k and v to `k_dst`, `v_dst`.
void split_norm_rope(Planner& pl, const SplitQkvNormRopeParams& p, const View& k_dst, const View& v_dst) {
  const int64_t hd = p.head_dim, row = (p.q_heads + 2 * p.kv_heads) * hd;
  NormRope n{p.tokens, p.q_heads, hd, p.rotary_dim, p.qk_mode, p.pos_offset, p.eps, "q_norm_w", ""};
  norm_rope(pl, n, {"qkv", 0, row, hd}, {"q_out", 0, hd, p.tokens * hd});
  n.heads = p.kv_heads;
  n.norm_w = "k_norm_w";
  norm_rope(pl, n, {"qkv", p.q_heads * hd, row, hd}, k_dst);
  n.mode = 0;  // v is only moved
  norm_rope(pl, n, {"qkv", (p.q_heads + p.kv_heads) * hd, row, hd}, v_dst);
}

}  // namespace

void add_rope_ops(PlanTable& t) {
  add_plan(t, ops::qk_norm_rope, [](Planner& pl) {
    const auto& p = pl.params<QkNormRopeParams>();
    const int64_t hd = p.head_dim;
    norm_rope(pl, {p.tokens, p.heads, hd, p.rotary_dim, p.mode, p.pos_offset, p.eps, "norm_w", ""},
              {"input", 0, p.heads * hd, hd}, {"output", 0, hd, p.tokens * hd});
  });
  add_plan(t, ops::qk_norm_rope_batched_per_item, [](Planner& pl) {
    const auto& p = pl.params<QkNormRopeBatchedPerItemParams>();
    const int64_t hd = p.head_dim;
    norm_rope(pl, {p.m, p.heads, hd, p.rotary_dim, p.mode, 0, p.eps, "norm_w", "positions"},
              {"input", 0, p.heads * hd, hd}, {"output", 0, p.heads * hd, hd});
  });
  add_plan(t, ops::split_qkv_norm_rope, [](Planner& pl) {
    const auto& p = pl.params<SplitQkvNormRopeParams>();
    const int64_t hd = p.head_dim;
    split_norm_rope(pl, p, {"k_out", 0, hd, p.tokens * hd}, {"v_out", 0, hd, p.tokens * hd});
  });
  add_plan(t, ops::split_qkv_norm_rope_into_cache, [](Planner& pl) {
    const auto& p = pl.params<SplitQkvNormRopeIntoCacheParams>();
    const int64_t hd = p.head_dim, cap = p.cache_capacity * hd;
    split_norm_rope(pl, p, {"cache_k", p.cache_len * hd, hd, cap}, {"cache_v", p.cache_len * hd, hd, cap});
  });
}

}  // namespace ts::ocl
