// Elementwise ops: one work-item per element (per output element for the gated ones); neighbouring
// work-items touch neighbouring elements, so every access is coalesced.

inline float silu(float x) { return x / (1.0f + exp(-x)); }

__kernel void gelu(__global const st_t* x, __global st_t* out, int len) {
  const int i = get_global_id(0);
  if (i >= len) return;
  const float v = LD(x, i);
  ST(out, i, 0.5f * v * (1.0f + erf(v * M_SQRT1_2_F)));
}

__kernel void add_inplace(__global st_t* residual, __global const st_t* x, int len) {
  const int i = get_global_id(0);
  if (i < len) ST(residual, i, LD(residual, i) + LD(x, i));
}

__kernel void scaled_add_inplace(__global st_t* dst, __global const st_t* src, int len, float scale) {
  const int i = get_global_id(0);
  if (i < len) ST(dst, i, fma(scale, LD(src, i), LD(dst, i)));
}

// 2-D range: dim 0 the column, dim 1 the row.
__kernel void add_bias(__global st_t* data, __global const st_t* bias, int rows, int cols) {
  const int c = get_global_id(0), r = get_global_id(1);
  if (c < cols && r < rows) ST(data, (size_t)r * cols + c, LD(data, (size_t)r * cols + c) + LD(bias, c));
}

// out[t, i] = silu(gate_up[in_row0 + t, i]) * gate_up[in_row0 + t, im + i], written at row out_row0 + t.
// The plain op is the strided one with both row offsets 0.
__kernel void silu_mul_split(__global const st_t* gate_up, __global st_t* out, int tokens, int im, int in_row0,
                             int out_row0) {
  const int i = get_global_id(0), t = get_global_id(1);
  if (i >= im || t >= tokens) return;
  const size_t in = (size_t)(in_row0 + t) * 2 * im;
  ST(out, (size_t)(out_row0 + t) * im + i, silu(LD(gate_up, in + i)) * LD(gate_up, in + im + i));
}

// out[i] = silu(gate[i]) * up[i]: the moe family's silu_mul_stacked / _batched (gate and up apart).
__kernel void silu_mul(__global const st_t* gate, __global const st_t* up, __global st_t* out, int len) {
  const int i = get_global_id(0);
  if (i < len) ST(out, i, silu(LD(gate, i)) * LD(up, i));
}

__kernel void silu_out(__global const st_t* x, __global st_t* out, int len) {
  const int i = get_global_id(0);
  if (i < len) ST(out, i, silu(LD(x, i)));
}

// add / mul with b broadcast (core/ops/tensor/broadcast.h): 2-D range, dim 0 the column c of out's
// rows [d0 * d1, d2], dim 1 the row r = (i0, i1); b's element is at i0 * s0 + i1 * s1 + c * s2.
// -DBIN_MUL multiplies.
__kernel void broadcast_binary(__global const st_t* a, __global const st_t* b, __global st_t* out, int rows, int d1,
                               int d2, int s0, int s1, int s2) {
  const int c = get_global_id(0), r = get_global_id(1);
  if (c >= d2 || r >= rows) return;
  const size_t o = (size_t)r * d2 + c;
  const float x = LD(a, o), y = LD(b, (size_t)(r / d1) * s0 + (size_t)(r % d1) * s1 + (size_t)c * s2);
#ifdef BIN_MUL
  ST(out, o, x * y);
#else
  ST(out, o, x + y);
#endif
}
