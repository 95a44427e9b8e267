// gemv: out[m, n] = sum_k a[m, k] * b[n, k] for small m (decode): bandwidth-bound on b.
// A work-group of WG work-items computes R consecutive columns of out for all GM rows of a. Each
// work-item reads VW consecutive k at a time, the work-items of a group side by side (coalesced),
// keeps GM x R vector partial sums, folds them to scalars, and one work-group tree reduction over
// all GM x R sums finishes. GPUs: WG 64, VW 4. CPU drivers: WG 1, VW 16 (one SIMD register per sum;
// each work-item streams its rows' contiguous bytes).
//   -DGM (= m, at most 8) -DR -DWG (a power of two) -DVW
// A file that includes this one may add kernel arguments (GEMV_ARGS, ", type name, ...") and change
// what column j stores for its F32 sum v before the one rounding: OUT_VALUE(j, v) (default v).
#ifndef GEMV_ARGS
#define GEMV_ARGS
#endif
#ifndef OUT_VALUE
#define OUT_VALUE(j, v) (v)
#endif
#define vec_t FLOATN(VW)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_rows(__global const st_t* a, __global const st_t* b, __global st_t* out, int n, int k GEMV_ARGS) {
  __local float red[GM * R][WG];
  const int lid = get_local_id(0);
  const int n0 = get_group_id(0) * R;
  // Rows past n (last group) read row n - 1 again: no branch in the loop, results discarded.
  size_t rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = (size_t)min(n0 + r, n - 1) * k;

  vec_t acc[GM][R];
#pragma unroll
  for (int i = 0; i < GM; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = (vec_t)(0.0f);
  const int kv = k / VW * VW;
  for (int kk = lid * VW; kk < kv; kk += WG * VW) {
    vec_t av[GM];
#pragma unroll
    for (int i = 0; i < GM; ++i) av[i] = LDN(VW, a, (size_t)i * k + kk);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const vec_t bv = LDN(VW, b, rows[r] + kk);
#pragma unroll
      for (int i = 0; i < GM; ++i) acc[i][r] = fma(av[i], bv, acc[i][r]);
    }
  }
  float sums[GM][R];
#pragma unroll
  for (int i = 0; i < GM; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float part[VW];
      VSTOREN(VW)(acc[i][r], 0, part);
      float s = 0.0f;
      for (int q = 0; q < VW; ++q) s += part[q];
      for (int kk = kv + lid; kk < k; kk += WG) s = fma(LD(a, (size_t)i * k + kk), LD(b, rows[r] + kk), s);
      sums[i][r] = s;
    }
  for (int i = 0; i < GM; ++i)
    for (int r = 0; r < R; ++r) red[i * R + r][lid] = sums[i][r];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s)
      for (int j = 0; j < GM * R; ++j) red[j][lid] += red[j][lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int j = lid; j < GM * R; j += WG) {
    const int i = j / R, r = j % R;
    if (n0 + r < n) ST(out, i * n + n0 + r, OUT_VALUE(n0 + r, red[j][0]));
  }
}
