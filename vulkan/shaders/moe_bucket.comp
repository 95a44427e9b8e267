#version 450
#extension GL_GOOGLE_include_directive : require
// The per-expert bucket sort of routed pairs (selected ids sel[n], n = batch x top_k), one work group
// per expert (experts past the group count loop), for compute_ids_tpe and moe_align_block_size:
//   MODE 0  compute_ids_tpe: lists[e * n + j] = the j-th pair routed to e, ascending; counts[e] = tpe
//   MODE 1  alignment, first pass: counts[e] only
//   MODE 2  alignment, second pass: expert e's pairs (ascending) at its padded offset (the padded
//           counts of the experts before it), padded to a multiple of block_size with the sentinel n;
//           block_experts[b] = e for its blocks; post[0] = the padded total (the last expert's group)
// Each invocation owns one contiguous segment of the pairs, so a pair's place is its segment's prefix
// (the counts of the segments before it, through shared memory: one barrier, no subgroup-size
// assumption) plus its rank inside the segment, and the lists come out ascending with no sort.
#include "dtype.glsl"

#define WG 64u
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;

BUF_IDX(0, sel)
layout(std430, binding = 1) buffer Buf1 { uint counts[]; };
BUF_IDX_OUT(2, lists)
BUF_IDX_OUT(3, block_experts)
BUF_IDX_OUT(4, post)
layout(push_constant) uniform Push { uint n, experts, block_size; } p;

shared uint seg_count[WG];
shared uint expert_start;

uint padded(uint c) { return (c + p.block_size - 1u) / p.block_size * p.block_size; }

void main() {
  const uint t = gl_LocalInvocationIndex;
  const uint seg = (p.n + WG - 1u) / WG;
  const uint lo = min(t * seg, p.n), hi = min(lo + seg, p.n);
  for (uint e = gl_WorkGroupID.x; e < p.experts; e += gl_NumWorkGroups.x) {
    uint c = 0u;
    for (uint i = lo; i < hi; ++i) c += sel[i] == e ? 1u : 0u;
    seg_count[t] = c;
    if (MODE == 2u && t == 0u) {
      // counts[] of every expert were written by the previous dispatch (the planner's first pass).
      uint at = 0u;
      for (uint x = 0u; x < e; ++x) at += padded(counts[x]);
      expert_start = at;
    }
    barrier();  // every segment's count (and the expert's start) is in
    uint before = 0u, total = 0u;
    for (uint x = 0u; x < WG; ++x) {
      before += x < t ? seg_count[x] : 0u;
      total += seg_count[x];
    }
    if (MODE == 1u) {
      if (t == 0u) counts[e] = total;
    } else {
      const uint start = MODE == 0u ? e * p.n : expert_start;
      uint j = start + before;
      for (uint i = lo; i < hi; ++i)
        if (sel[i] == e) lists[j++] = i;
      if (MODE == 0u) {
        if (t == 0u) counts[e] = total;
      } else {
        const uint end = start + padded(total);
        for (uint x = start + total + t; x < end; x += WG) lists[x] = p.n;  // the sentinel
        for (uint b = start / p.block_size + t; b < end / p.block_size; b += WG) block_experts[b] = e;
        if (e == p.experts - 1u && t == 0u) post[0] = end;
      }
    }
    barrier();  // seg_count and expert_start are rewritten for the next expert
  }
}
