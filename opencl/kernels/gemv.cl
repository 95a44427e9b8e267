// gemv: out[m, n] = sum_k a[m, k] * b[n, k] for small m (decode): bandwidth-bound on b.
// A work-group of WG work-items computes R consecutive columns of out for all GM rows of a. The
// work-items stride over k one element apart (coalesced; contiguous SIMD lanes on CPU drivers), keep
// GM x R partial sums, and finish with one work-group tree reduction over all of them.
//   -DGM (= m, at most 8) -DR (columns per group) -DWG (work-group size, a power of two)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_rows(__global const st_t* a, __global const st_t* b, __global st_t* out, int n, int k) {
  __local float red[GM * R][WG];
  const int lid = get_local_id(0);
  const int n0 = get_group_id(0) * R;

  float acc[GM][R];
  for (int i = 0; i < GM; ++i)
    for (int r = 0; r < R; ++r) acc[i][r] = 0.0f;
  // Rows past n (last group) read row n - 1 again: no branch in the loop, results discarded.
  int rows[R];
  for (int r = 0; r < R; ++r) rows[r] = min(n0 + r, n - 1);

  for (int kk = lid; kk < k; kk += WG) {
    float av[GM];
    for (int i = 0; i < GM; ++i) av[i] = LD(a, i * k + kk);
    for (int r = 0; r < R; ++r) {
      const float bv = LD(b, rows[r] * k + kk);
      for (int i = 0; i < GM; ++i) acc[i][r] = fma(av[i], bv, acc[i][r]);
    }
  }
  for (int i = 0; i < GM; ++i)
    for (int r = 0; r < R; ++r) red[i * R + r][lid] = acc[i][r];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s)
      for (int j = 0; j < GM * R; ++j) red[j][lid] += red[j][lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  // The GM x R results are written by the first GM * R work-items, one each.
  if (lid < GM * R) {
    const int i = lid / R, r = lid % R;
    if (n0 + r < n) ST(out, i * n + n0 + r, red[lid][0]);
  }
}
