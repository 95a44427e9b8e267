#include "core/ops/core/rope_common.h"

#include <cmath>

namespace ts::rope {

void check_params(int64_t head_dim, int64_t rotary_dim, int64_t mode, float eps, int64_t max_pos,
                  const char* mode_name) {
  describe::positive(head_dim, "head_dim");
  check(mode == kTransposeOnly || mode == kNormRope || mode == kRopeOnly,
        "parameter '{}' must be 0 (transpose only), 1 (RMS norm then RoPE) or 2 (RoPE only), is {}", mode_name,
        mode);
  describe::non_negative(rotary_dim, "rotary_dim");
  const int64_t rot = rotary(rotary_dim, head_dim);
  check(rot % 2 == 0 && rot <= head_dim,
        "rotary_dim {} must be even and at most head_dim {} (0 means head_dim)", rot, head_dim);
  check(eps >= 0, "parameter 'eps' must not be negative, is {}", eps);
  describe::positive(max_pos, "max_pos (the rows of cos and sin)");
}

void check_positions(int64_t pos_offset, int64_t tokens, int64_t max_pos, bool reads_tables) {
  describe::non_negative(pos_offset, "pos_offset");
  const int64_t end = checked::add(pos_offset, tokens, "positions pos_offset + tokens");
  check(!reads_tables || end <= max_pos,
        "positions {} .. {} reach past the RoPE tables: max_pos (rows of cos and sin) is {}", pos_offset, end - 1,
        max_pos);
}

void check_position_tensor(const Tensor& positions, int64_t max_pos) {
  const auto pos = to_indices(positions);
  for (size_t i = 0; i < pos.size(); ++i)
    check(pos[i] >= 0 && pos[i] < max_pos, "positions[{}] = {} is not below max_pos {} (rows of cos and sin)", i,
          pos[i], max_pos);
}

void generate_tables(TensorMap& t, int64_t max_pos, int64_t rotary_dim, int64_t head_dim) {
  describe::rope_tables(t.at("cos"), t.at("sin"), max_pos, rotary(rotary_dim, head_dim) / 2);
}

void generate_norm_weight(Tensor& w, Rng& r) { describe::uniform(w, r, kMinWeight, kMaxWeight); }

// Mode 0 moves bits. Otherwise each rotated output is a*cos - b*sin: two products and an add in F32,
// at most 3 u32 (|a||cos| + |b||sin|) <= 3 u32 max|a| (max|cos| + max|sin|), the tables' maxima
// read from the case (1 for real tables), plus one rounding of the output (rtol).
//   mode 2: a, b are inputs: max|a| is the case's largest |input|.
//   mode 1: a = x * r * w with r = 1/sqrt(mean(x^2) + eps). The sum of head_dim squares is off by at most
//   8 sqrt(head_dim) u32 relative (core/tolerance.h's model), the mean, eps, sqrt and division add 4 u32,
//   the two products 2 u32; and |x r| <= sqrt(head_dim) (no channel holds more than all the energy), so
//   max|a| <= sqrt(head_dim) max|w|, whatever the input's scale.
Tolerance tolerance(DType dt, int64_t mode, int64_t head_dim, const TensorMap& in, const std::string& x,
                    const std::vector<std::string>& norm_ws) {
  if (mode == kTransposeOnly) return tol::exact();
  const double u32 = 0x1p-24, rtol = 2 * unit_roundoff(dt) + 4 * u32;
  const double tables = magnitude::max_abs(in, "cos") + magnitude::max_abs(in, "sin");
  if (mode == kRopeOnly) {
    const double x_max = magnitude::max_abs(in, x);
    return {3 * u32 * x_max * tables, rtol,
            fmt::format("rope: 3 u32 x max|{}| {} x (max|cos| + max|sin|) {} abs + 2 u_{} rel", x,
                        magnitude::str(x_max), magnitude::str(tables), dtype_name(dt))};
  }
  double w_max = 0;
  std::string ws;
  for (const auto& w : norm_ws) {
    w_max = std::max(w_max, magnitude::max_abs(in, w));
    ws += (ws.empty() ? "" : ", ") + w;
  }
  const double hd = static_cast<double>(head_dim);
  const double rel = 8 * std::sqrt(hd) * u32 + 4 * u32 + 2 * u32 + 3 * u32;
  return {rel * std::sqrt(hd) * w_max * tables, rtol,
          fmt::format("rms norm over {} + rope: (8 sqrt(hd) + 9) u32 x sqrt(hd) x max|{}| {} x (max|cos| + max|sin|) "
                      "{} abs + 2 u_{} rel",
                      head_dim, ws, magnitude::str(w_max), magnitude::str(tables), dtype_name(dt))};
}

double flops(int64_t mode, int64_t rows, int64_t head_dim, int64_t rotary_dim) {
  const double n = static_cast<double>(rows);
  const double rot = static_cast<double>(rotary(rotary_dim, head_dim)), hd = static_cast<double>(head_dim);
  if (mode == kTransposeOnly) return 0;
  const double rope = 3 * rot;  // per pair: 4 multiplies, 2 adds
  return n * (mode == kNormRope ? rope + 4 * hd : rope);  // norm: square, add, scale by r, by w
}

std::vector<TensorDecl> split_inputs(const SplitQkvNormRopeParams& p) {
  const Shape table = table_shape(p.max_pos, p.rotary_dim, p.head_dim);
  const int64_t heads = checked::add(p.q_heads, checked::mul(2, p.kv_heads, "2 kv_heads"), "q_heads + 2 kv_heads");
  return {describe::in("qkv", {p.tokens, checked::mul(heads, p.head_dim, "qkv width")}),
          describe::in("q_norm_w", {p.head_dim}), describe::in("k_norm_w", {p.head_dim}), describe::in("cos", table),
          describe::in("sin", table)};
}

// q_heads need not be a multiple of kv_heads: the split pairs no heads (attention checks GQA).
void check_split_params(const SplitQkvNormRopeParams& p) {
  describe::positive(p.tokens, "tokens");
  describe::positive(p.q_heads, "q_heads");
  describe::positive(p.kv_heads, "kv_heads");
  check_params(p.head_dim, p.rotary_dim, p.qk_mode, p.eps, p.max_pos, "qk_mode");
  (void)split_inputs(p);  // the qkv width (q_heads + 2 kv_heads) * head_dim must fit
}

void generate_split_inputs(const SplitQkvNormRopeParams& p, TensorMap& t, Rng& r) {
  describe::normal(t.at("qkv"), r);
  generate_norm_weight(t.at("q_norm_w"), r);
  generate_norm_weight(t.at("k_norm_w"), r);
  generate_tables(t, p.max_pos, p.rotary_dim, p.head_dim);
}

Cost split_cost(const SplitQkvNormRopeParams& p, DType dt) {
  const double qkv = double(p.tokens * (p.q_heads + 2 * p.kv_heads) * p.head_dim);
  const double tables = p.qk_mode == kTransposeOnly ? 0 : 2.0 * p.tokens * (rotary(p.rotary_dim, p.head_dim) / 2);
  const double norms = p.qk_mode == kNormRope ? 2.0 * p.head_dim : 0;
  return {flops(p.qk_mode, p.tokens * (p.q_heads + p.kv_heads), p.head_dim, p.rotary_dim),
          describe::bytes(dt, 2 * qkv + tables + norms)};
}

}  // namespace ts::rope
