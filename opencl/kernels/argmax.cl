// argmax_rows: one work-group per row. Each work-item scans its strided share in vectors of VW,
// keeping per lane the first index of that lane's maximum (strictly greater replaces: NaN and -inf
// never win, the reference's rule); the lanes, the scalar tail and then the work-group (a tree
// reduction) combine by larger value, and on ties the lower index. A row with no winner gives 0.
// GPUs: 256 work-items, VW 1; CPU drivers: 1 work-item, VW 16.   -DVW
#define vec_t FLOATN(VW)
#define ivec_t INTN(VW)

__constant int kLane[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

// Keeps (bv, bi) the better of itself and (v, i): larger value, on ties the lower index.
#define TAKE_BETTER(bv, bi, v, i) \
  do { if ((v) > (bv) || ((v) == (bv) && (i) < (bi))) { (bv) = (v); (bi) = (i); } } while (0)

__kernel void argmax_rows(__global const st_t* logits, __global uint* ids, int n, __local float* best_v,
                          __local int* best_i) {
  const int row = get_group_id(0), lid = get_local_id(0), g = get_local_size(0);
  __global const st_t* lr = logits + (size_t)row * n;
  vec_t vbest = (vec_t)(-INFINITY);
  ivec_t vidx = (ivec_t)(n);  // n: none yet, loses every tie
  const ivec_t lane = VLOADN(VW)(0, kLane);
  for (int c = lid * VW; c + VW <= n; c += g * VW) {
    const vec_t v = LDN(VW, lr, c);
    const ivec_t gt = isgreater(v, vbest);
    vbest = select(vbest, v, gt);
    vidx = select(vidx, (ivec_t)(c) + lane, gt);
  }
  float bv[VW];
  int bi[VW];
  VSTOREN(VW)(vbest, 0, bv);
  VSTOREN(VW)(vidx, 0, bi);
  float mv = bv[0];
  int mi = bi[0];
  for (int q = 1; q < VW; ++q) TAKE_BETTER(mv, mi, bv[q], bi[q]);
  for (int c = n / VW * VW + lid; c < n; c += g) {
    const float v = LD(lr, c);
    if (v > mv) { mv = v; mi = c; }  // tail indices follow the vector part's: ties keep the earlier
  }
  best_v[lid] = mv;
  best_i[lid] = mi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = g / 2; s > 0; s >>= 1) {
    if (lid < s) {
      float v = best_v[lid];
      int i = best_i[lid];
      TAKE_BETTER(v, i, best_v[lid + s], best_i[lid + s]);
      best_v[lid] = v;
      best_i[lid] = i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) ids[row] = (uint)(best_i[0] < n ? best_i[0] : 0);
}
