#pragma once
// What the four RoPE ops (qk_norm_rope, its batched form, split_qkv_norm_rope and its into-cache form)
// share: parameter checks, position checks, table shapes and generators, and the tolerance.
#include <cstdint>

#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts::rope {

// The modes of docs/catalog.md: 0 transpose only, 1 per-head RMS norm then RoPE, 2 RoPE only.
inline constexpr int64_t kTransposeOnly = 0, kNormRope = 1, kRopeOnly = 2;

// rotary_dim 0 means head_dim.
inline int64_t rotary(int64_t rotary_dim, int64_t head_dim) { return rotary_dim ? rotary_dim : head_dim; }

// head_dim > 0; rotary_dim 0 or even in [2, head_dim]; mode 0, 1 or 2; eps >= 0; max_pos > 0.
void check_params(int64_t head_dim, int64_t rotary_dim, int64_t mode, float eps, int64_t max_pos,
                  const char* mode_name);

// The tables cos, sin: [max_pos, rotary_dim / 2].
inline Shape table_shape(int64_t max_pos, int64_t rotary_dim, int64_t head_dim) {
  return {max_pos, rotary(rotary_dim, head_dim) / 2};
}

// max_pos is the tables' first dimension (an inferred parameter).
inline int64_t infer_max_pos(const TensorMap& t) { return describe::dim_of(t, "cos", 2, 0); }

// Positions pos_offset .. pos_offset + tokens - 1: pos_offset >= 0 and pos_offset + tokens fits in
// 64 bits always; below max_pos too when the op reads the tables (`reads_tables`).
void check_positions(int64_t pos_offset, int64_t tokens, int64_t max_pos, bool reads_tables);
// Every entry of a U32 `positions` tensor must lie below max_pos.
void check_position_tensor(const Tensor& positions, int64_t max_pos);

// cos / sin tables (theta 10000) and RMS-norm weights drawn from U(kMinWeight, kMaxWeight).
inline constexpr double kMinWeight = 0.5, kMaxWeight = 1.5;
void generate_tables(TensorMap& t, int64_t max_pos, int64_t rotary_dim, int64_t head_dim);
void generate_norm_weight(Tensor& w, Rng& r);

// The tolerance of one (norm +) RoPE of a head, from the case's input `x`, its norm weights `norm_ws`
// and its cos / sin tables; see the derivation in the .cpp.
Tolerance tolerance(DType dt, int64_t mode, int64_t head_dim, const TensorMap& in, const std::string& x,
                    const std::vector<std::string>& norm_ws);

// Cost of a (norm +) rope over `rows` head vectors: FLOPs per element and bytes of the tables read.
double flops(int64_t mode, int64_t rows, int64_t head_dim, int64_t rotary_dim);

// The split ops (split_qkv_norm_rope and its into-cache form): their common inputs qkv
// [tokens, (q_heads + 2 kv_heads) * head_dim], q_norm_w, k_norm_w, cos, sin, checks and generator.
std::vector<TensorDecl> split_inputs(const SplitQkvNormRopeParams& p);
void check_split_params(const SplitQkvNormRopeParams& p);
void generate_split_inputs(const SplitQkvNormRopeParams& p, TensorMap& t, Rng& r);
// FLOPs and bytes of the split, norm and rope (the destination of k and v does not change them).
Cost split_cost(const SplitQkvNormRopeParams& p, DType dt);

}  // namespace ts::rope
