#version 450
#extension GL_GOOGLE_include_directive : require
// route_topk_softmax: one work group per token row of logits [batch, experts] (rows past the group
// count loop). The invocations stride over the row's experts. Selection is by the logits themselves
// (docs/catalog.md), as the reference ranks them: a larger logit first, equal ones (-0 and +0 included) by
// the lower id, NaN after every number. Each logit maps to an order-preserving uint key (NaN the
// lowest), so round k takes the largest key, lowest id among equal keys, of the experts that rank
// after the previous pick: no per-expert "chosen" state is needed whatever the expert count. Each
// invocation offers its best candidate and two work-group reductions (reduce.glsl: the largest key,
// then the lowest id holding it) pick the winner. The softmax's max is the first pick's logit, its
// denominator one work-group sum of exp(l - max). Weights in F32 (exp_accurate: GLSL's exp is too
// loose), ids I32.
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

// Larger logit, larger key; -0 keyed as +0 (they compare equal); NaN below -inf (key 0).
uint logit_key(float l) {
  if (isnan(l)) return 0u;
  const uint u = floatBitsToUint(l == 0.0 ? 0.0 : l);
  return (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u;
}

float key_logit(uint k) {
  if (k == 0u) return uintBitsToFloat(0x7fc00000u);  // NaN
  return uintBitsToFloat((k & 0x80000000u) != 0u ? k & 0x7fffffffu : ~k);
}

void main() {
  const uint t = gl_LocalInvocationIndex;
  for (uint row = gl_WorkGroupID.x; row < p.batch; row += gl_NumWorkGroups.x) {
    const uint base = row * p.experts;
    float max_l = 0.0, denom = 0.0, chosen = 0.0;
    uint prev_key = 0u, prev_e = kNone;
    for (uint k = 0u; k < p.top_k; ++k) {
      uint best_key = 0u, best_e = kNone;
      for (uint e = t; e < p.experts; e += WG) {
        const uint key = logit_key(ld(logits[base + e]));
        const bool after = prev_e == kNone || key < prev_key || (key == prev_key && e > prev_e);
        // Strided e ascends, so a strictly larger key is needed to replace the best: ties keep the lower id.
        if (after && (best_e == kNone || key > best_key)) {
          best_key = key;
          best_e = e;
        }
      }
      const uint win_key = ~wg_min_u(best_e == kNone ? ~0u : ~best_key);  // the largest key offered
      const uint win_e = wg_min_u(best_e != kNone && best_key == win_key ? best_e : kNone);
      const float win_l = key_logit(win_key);
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
      prev_key = win_key;
      prev_e = win_e;
    }
    // Invocation 0 wrote every weight of the row: it alone rescales them (its own writes, in order).
    if (p.norm != 0u && t == 0u)
      for (uint k = 0u; k < p.top_k; ++k) out_w[row * p.top_k + k] = out_w[row * p.top_k + k] / chosen;
  }
}
