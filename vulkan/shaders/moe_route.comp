#version 450
#extension GL_GOOGLE_include_directive : require
// route_topk_softmax: one work group per token row of logits [batch, experts] (rows past the group
// count loop). The invocations stride over the row's experts. Selection is by the logits themselves
// (OPS.md): round k takes the largest logit, the lowest id among equal ones, of the experts that
// rank after the previous pick in that order (a logit below it, or equal with a higher id), so no
// per-expert "chosen" state is needed whatever the expert count: each invocation offers its best
// candidate, and two work-group reductions (reduce.glsl: the largest logit, then the lowest id
// holding it) pick the winner. The softmax's max is the first pick's logit; its denominator one
// work-group sum of exp(l - max). Weights in F32 (exp_accurate: GLSL's exp is too loose), ids I32.
#include "dtype.glsl"
#include "math.glsl"

#define WG 64
#include "reduce.glsl"

layout(local_size_x = WG) in;
BUF_IN(0, logits)
layout(std430, binding = 1) writeonly buffer Buf1 { uint out_ids[]; };
layout(std430, binding = 2) buffer Buf2 { float out_w[]; };  // read back by its writer to renormalise
layout(push_constant) uniform Push { uint batch, experts, top_k, norm; } p;

const uint kNone = 0xffffffffu;

void main() {
  const uint t = gl_LocalInvocationIndex;
  for (uint row = gl_WorkGroupID.x; row < p.batch; row += gl_NumWorkGroups.x) {
    const uint base = row * p.experts;
    float prev_l = 0.0, max_l = 0.0, denom = 0.0, chosen = 0.0;
    uint prev_e = kNone;
    for (uint k = 0u; k < p.top_k; ++k) {
      float best_l = -1.0 / 0.0;
      uint best_e = kNone;
      for (uint e = t; e < p.experts; e += WG) {
        const float l = ld(logits[base + e]);
        const bool after = prev_e == kNone || l < prev_l || (l == prev_l && e > prev_e);
        // Strided e ascends, so a strictly greater logit is needed to replace the best: ties keep the lower id.
        if (after && (best_e == kNone || l > best_l)) {
          best_l = l;
          best_e = e;
        }
      }
      const float win_l = wg_max(best_e == kNone ? -1.0 / 0.0 : best_l);
      const uint win_e = wg_min_u(best_e != kNone && best_l == win_l ? best_e : kNone);
      if (k == 0u) {
        // The largest logit: the softmax's max, then its denominator over the whole row.
        max_l = win_l;
        float s = 0.0;
        for (uint e = t; e < p.experts; e += WG) s += exp_accurate(ld(logits[base + e]) - max_l);
        denom = wg_sum(s);
      }
      const float w = exp_accurate(win_l - max_l) / denom;
      chosen += w;
      if (t == 0u) {
        out_ids[row * p.top_k + k] = win_e;
        out_w[row * p.top_k + k] = w;
      }
      prev_l = win_l;
      prev_e = win_e;
    }
    // Invocation 0 wrote every weight of the row: it alone rescales them (its own writes, in order).
    if (p.norm != 0u && t == 0u)
      for (uint k = 0u; k < p.top_k; ++k) out_w[row * p.top_k + k] = out_w[row * p.top_k + k] / chosen;
  }
}
