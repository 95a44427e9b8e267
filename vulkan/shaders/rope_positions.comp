#version 450
#extension GL_GOOGLE_include_directive : require
// apply_rope_positions / apply_rope_partial: rotate-half RoPE of x [seq, heads, hd] at positions[t],
// the angles computed here (core/ops/tensor/rope_angle.h). Pair i's G = 2^64 f_i / (2 pi) arrives as
// two words (hi, lo) in the push constants, MAX_PAIRS pairs per dispatch (the planner splits rotary_dim
// over dispatches: the table then needs no buffer); t = pos * hi + mulhi(pos, lo), wrapping, is the
// turn's 32-bit fraction, exact at any position. GLSL's sin / cos promise 2^-11 at best, so the
// quadrant is split off exactly in integers (q = round(t / 2^30), remainder within an eighth of a
// turn) and sin / cos of the remainder, in [-pi/4, pi/4], come from core/approx/sincos.inc.
// Invocations stride over (token, head, slot): slot < npairs rotates pair pair0 + slot, slot >= npairs
// copies channel rotary_dim + slot - npairs (ncopy is hd - rotary_dim in one dispatch, else 0).
#include "dtype.glsl"
#include "core/approx/sincos.inc"

#define WG 64
#define MAX_PAIRS 12

layout(local_size_x = WG) in;
BUF_IN(0, x)
BUF_IDX(1, positions)
BUF_OUT(2, o)
layout(push_constant) uniform Push {
  uint seq, heads, hd, half_rot, pair0, npairs, ncopy;
  uint g[2 * MAX_PAIRS];  // (hi, lo) of pair pair0 + j at 2 j, 2 j + 1
} p;

void main() {
  const uint slots = p.npairs + p.ncopy, total = p.seq * p.heads * slots;
  for (uint w = gl_GlobalInvocationID.x; w < total; w += gl_NumWorkGroups.x * WG) {
    const uint slot = w % slots, head_row = w / slots;  // head_row = token * heads + head
    const uint row = head_row * p.hd;
    if (slot >= p.npairs) {
      const uint c = 2u * p.half_rot + slot - p.npairs;
      o[row + c] = x[row + c];
      continue;
    }
    const uint pos = positions[head_row / p.heads];
    uint msb, lsb;
    umulExtended(pos, p.g[2u * slot + 1u], msb, lsb);
    const uint t = pos * p.g[2u * slot] + msb;
    const uint q = ((t + (1u << 29)) >> 30) & 3u;  // the nearest quarter turn (wrapping past a whole)
    const int rem = int(t - (q << 30));             // in [-2^29, 2^29]: an eighth of a turn
    const float xr = float(rem) * 1.4629180792671596e-09;  // 2 pi / 2^32: radians, |xr| <= pi/4
    const float u = xr * xr;
    float ps = 0.0, pc = 0.0;
#define SIN_STEP(c) ps = ps * u + float(c);
#define COS_STEP(c) pc = pc * u + float(c);
    TS_SIN_U(SIN_STEP)
    TS_COS_U(COS_STEP)
    const float sr = xr * ps, cr = pc;
    // The angle is q quarter turns + xr.
    const float c = q == 0u ? cr : q == 1u ? -sr : q == 2u ? -cr : sr;
    const float s = q == 0u ? sr : q == 1u ? cr : q == 2u ? -sr : -cr;
    const uint i = p.pair0 + slot;
    const float a = ld(x[row + i]), b = ld(x[row + p.half_rot + i]);
    o[row + i] = st(a * c - b * s);
    o[row + p.half_rot + i] = st(b * c + a * s);
  }
}
