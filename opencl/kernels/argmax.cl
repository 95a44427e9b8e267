// argmax_rows: one work-group per row; each work-item keeps the best (value, index) of its strided
// share, then a tree reduction keeps the larger value, and on ties the lower index (first max).
__kernel void argmax_rows(__global const st_t* logits, __global uint* ids, int n, __local float* best_v,
                          __local int* best_i) {
  const int row = get_group_id(0), lid = get_local_id(0), g = get_local_size(0);
  __global const st_t* lr = logits + (size_t)row * n;
  float bv = -INFINITY;
  int bi = n;  // none yet: loses every tie; a row with no winner gives 0
  for (int c = lid; c < n; c += g) {
    const float v = LD(lr, c);
    if (v > bv) { bv = v; bi = c; }  // strictly greater: NaN and -inf never win (the reference's rule)
  }
  best_v[lid] = bv;
  best_i[lid] = bi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = g / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const float ov = best_v[lid + s];
      const int oi = best_i[lid + s];
      if (ov > best_v[lid] || (ov == best_v[lid] && oi < best_i[lid])) { best_v[lid] = ov; best_i[lid] = oi; }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) ids[row] = (uint)(best_i[0] < n ? best_i[0] : 0);
}
