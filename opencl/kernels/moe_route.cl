// The MoE routing ops on the device, so the expert GEMV / GEMM that follow read ids, tpe and sorted ids
// from device buffers with no host round trip: route_topk_softmax (one work-group per token),
// compute_ids_tpe and moe_align_block_size (one work-group per expert, each compacting the pairs routed
// to it in pair order: deterministic, no atomics, ascending by construction).
// GPUs: WG work-items share a row (tree reductions, a work-group scan); CPU drivers: WG 1, one
// work-item walking the row (the loops are the same code).
//   -DWG (a power of two)

// The routing order: larger logit first, equal logits the lower id first, NaN after every number (a
// NaN never wins while a number is left; among NaN the lower id). A strict total order on (value, id),
// so the k-th pick is the best of those ranked after pick k - 1: no chosen flags, any E.
inline bool ranks_before(float v, int i, float w, int j) {
  if (j < 0) return i >= 0;  // -1: no candidate yet
  if (i < 0) return false;
  if (isnan(w)) return !isnan(v) || i < j;
  if (isnan(v)) return false;
  return v > w || (v == w && i < j);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void route_topk_softmax(__global const st_t* logits, __global int* out_ids, __global float* out_weights, int E,
                        int top_k, int norm) {
  __local float red[WG];
  __local float best_v[WG];
  __local int best_i[WG];
  const int lid = get_local_id(0);
  __global const st_t* row = logits + (size_t)get_group_id(0) * E;
  __global int* ids = out_ids + (size_t)get_group_id(0) * top_k;
  __global float* weights = out_weights + (size_t)get_group_id(0) * top_k;

  float mx = -INFINITY;
  for (int e = lid; e < E; e += WG) mx = fmax(mx, LD(row, e));
  mx = wg_max(mx, red);
  float sum = 0.0f;
  for (int e = lid; e < E; e += WG) sum += exp(LD(row, e) - mx);
  sum = wg_sum(sum, red);

  float prev_v = 0.0f, chosen = 0.0f;
  int prev_i = -1;
  for (int k = 0; k < top_k; ++k) {
    float bv = 0.0f;
    int bi = -1;
    for (int e = lid; e < E; e += WG) {
      const float v = LD(row, e);
      if ((prev_i < 0 || ranks_before(prev_v, prev_i, v, e)) && ranks_before(v, e, bv, bi)) {
        bv = v;
        bi = e;
      }
    }
    best_v[lid] = bv;
    best_i[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
      if (lid < s && ranks_before(best_v[lid + s], best_i[lid + s], best_v[lid], best_i[lid])) {
        best_v[lid] = best_v[lid + s];
        best_i[lid] = best_i[lid + s];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    prev_v = best_v[0];
    prev_i = best_i[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    const float w = exp(prev_v - mx) / sum;
    chosen += w;
    if (lid == 0) {
      ids[k] = prev_i;
      weights[k] = w;
    }
  }
  if (norm && lid == 0)
    for (int k = 0; k < top_k; ++k) weights[k] /= chosen;  // this work-item's own writes
}

// The pairs p < n (ascending) with sel[p] == e, written to dst[0 ..]; returns how many. Chunks of WG
// pairs, each placed by an inclusive work-group scan of its hit flags (scan: WG ints of local memory).
inline int compact_pairs(__global const int* sel, int n, int e, __global int* dst, __local int* scan) {
  const int lid = get_local_id(0);
  int total = 0;
  for (int p0 = 0; p0 < n; p0 += WG) {
    const int p = p0 + lid;
    const int hit = p < n && sel[p] == e;
    scan[lid] = hit;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < WG; off <<= 1) {
      const int v = lid >= off ? scan[lid - off] : 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      scan[lid] += v;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (hit) dst[total + scan[lid] - 1] = p;
    total += scan[WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return total;
}

// compute_ids_tpe: group e writes row e of ids [E, n] and tpe[e]; slots past tpe[e] stay untouched.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void moe_ids_tpe(__global const int* sel, __global int* tpe, __global int* ids, int n) {
  __local int scan[WG];
  const int e = get_group_id(0);
  const int count = compact_pairs(sel, n, e, ids + (size_t)e * n, scan);
  if (get_local_id(0) == 0) tpe[e] = count;
}

// moe_align_block_size, first pass: counts[e] = pairs routed to expert e (group e), a tree sum of
// the work-items' counts in integers.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void moe_count(__global const int* sel, __global int* counts, int n) {
  __local int red[WG];
  const int e = get_group_id(0), lid = get_local_id(0);
  int c = 0;
  for (int p = lid; p < n; p += WG) c += sel[p] == e;
  red[lid] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) counts[e] = red[0];
}

// Second pass, group e: its first slot is the sum of the earlier experts' counts rounded up to whole
// blocks; it places its pairs there, pads its last block with the sentinel n, names its blocks in
// expert_ids, and the last expert writes the padded total.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void moe_align(__global const int* sel, __global const int* counts, __global int* sorted, __global int* expert_ids,
               __global int* num_post_padded, int n, int E, int bs) {
  __local int scan[WG];
  const int e = get_group_id(0), lid = get_local_id(0);
  int start = 0;
  for (int f = 0; f < e; ++f) start += (counts[f] + bs - 1) / bs * bs;
  const int count = compact_pairs(sel, n, e, sorted + start, scan);
  const int end = start + (count + bs - 1) / bs * bs;
  for (int i = start + count + lid; i < end; i += WG) sorted[i] = n;
  for (int b = start / bs + lid; b < end / bs; b += WG) expert_ids[b] = e;
  if (e == E - 1 && lid == 0) num_post_padded[0] = end;
}
