// Flash attention with an online softmax over key tiles held in local memory (FlashAttention-2 form).
// A work-group takes one (batch, kv head, block of bq query rows). Its rows are the query heads of the
// kv head's GQA group times the q_len positions, flattened as row = g * q_len + i, so a K/V tile is
// read once for the whole group (decode reads each K/V byte once).
// Scores: scale * (q[:dk1] . k1[j] + q[dk1:] . k2[j]); values v[j] (dv columns). Plain attention has
// dk2 = 0; MLA's absorbed form is k1 = v = the compressed cache and k2 = the rope keys.
// Visibility (OPS.md): row at position P = pos_offset + i sees j < kv_len, j <= P when causal, and
// j >= P + 1 - window when window > 0. Only keys some row of the block sees are ever loaded.
// Local memory (floats): qs[bq][dk], ks[bk][dk], vs[bk][dv], ps[bq][bk], and the rows' running max,
// sum and rescale factor. All row work is in vectors of VW floats (VW divides dk1, dk2 and dv).
// A work-item owns output chunks lid + t * L (t < MAXO) of the bq x (dv / VW) block, in registers.
// GPUs: L = 128 work-items, VW 4. CPU drivers: L = 1, VW 16 (the work-item's loops run as SIMD code).
#define vec_t FLOATN(VW)
#define VL(p, i) VLOADN(VW)(0, (p) + (i))
#define VS(v, p, i) VSTOREN(VW)((v), 0, (p) + (i))

inline void visible_range(int i, int kv_len, int pos_offset, int causal, int window, int* lo, int* hi) {
  const int p = pos_offset + i;
  *hi = causal ? min(p + 1, kv_len) : kv_len;
  *lo = window > 0 ? max(0, p + 1 - window) : 0;
}

// Horizontal sum by halving: log2(VW) vector adds.
inline float hsum(vec_t v) {
#if VW == 16
  const float8 h8 = v.lo + v.hi;
  const float4 h4 = h8.lo + h8.hi;
#elif VW == 8
  const float4 h4 = v.lo + v.hi;
#elif VW == 4
  const float4 h4 = v;
#endif
#if VW >= 4
  const float2 h2 = h4.lo + h4.hi;
  return h2.x + h2.y;
#elif VW == 2
  return v.x + v.y;
#else
  return v;
#endif
}

__kernel void flash_attn(__global const st_t* q, __global const st_t* k1, __global const st_t* k2,
                         __global const st_t* v, __global st_t* out, __global const uint* kv_lens, int kv_len_item,
                         int q_off, int out_off, int nh, int nkv, int q_len, int kv_len, int pos_offset, int causal,
                         int window, float scale, int dk1, int dk2, int dv, int k1_bs, int k1_hs, int k1_rs, int k2_bs,
                         int k2_hs, int k2_rs, int v_bs, int v_hs, int v_rs, int bq, int bk, __local float* qs,
                         __local float* ks, __local float* vs, __local float* ps, __local float* st,
                         __local int* range) {
  const int lid = get_local_id(0), L = get_local_size(0);
  const int group = nh / nkv, rows = group * q_len;
  const int nblk = (rows + bq - 1) / bq;
  const int kvh = get_group_id(1) / nblk, r0 = (get_group_id(1) % nblk) * bq, b = get_group_id(2);
  const int nr = min(bq, rows - r0), dk = dk1 + dk2;
  const int ck = dk / VW, cv = dv / VW, ck1 = dk1 / VW;  // row lengths in chunks
  if (kv_len_item >= 0) kv_len = (int)kv_lens[kv_len_item];
  __local float* row_m = st;
  __local float* row_l = st + bq;
  __local float* row_a = st + 2 * bq;

  // Each row's visible keys [range[2r], range[2r+1]), and those any row of the block sees: [j_lo, j_hi).
  int j_lo = kv_len, j_hi = 0;
  for (int r = 0; r < nr; ++r) {
    int lo, hi;
    visible_range((r0 + r) % q_len, kv_len, pos_offset, causal, window, &lo, &hi);
    if (lid == 0) { range[2 * r] = lo; range[2 * r + 1] = hi; }
    if (lo < hi) { j_lo = min(j_lo, lo); j_hi = max(j_hi, hi); }
  }

  // Query row r of the block is head kvh * group + g at position i.
  for (int e = lid; e < nr * ck; e += L) {
    const int r = e / ck, c = e % ck, row = r0 + r;
    const int head = kvh * group + row / q_len, i = row % q_len;
    VS(LDN(VW, q, q_off + ((size_t)(b * nh + head) * q_len + i) * dk + c * VW), qs, r * dk + c * VW);
  }
  for (int r = lid; r < nr; r += L) { row_m[r] = -INFINITY; row_l[r] = 0.0f; }
  vec_t acc[MAXO];
#pragma unroll
  for (int t = 0; t < MAXO; ++t) acc[t] = (vec_t)(0.0f);

  __global const st_t* k1h = k1 + (size_t)b * k1_bs + (size_t)kvh * k1_hs;
  __global const st_t* k2h = k2 + (size_t)b * k2_bs + (size_t)kvh * k2_hs;
  __global const st_t* vh = v + (size_t)b * v_bs + (size_t)kvh * v_hs;

  for (int j0 = j_lo; j0 < j_hi; j0 += bk) {
    const int nj = min(bk, j_hi - j0);
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile's readers are done
    // Consecutive work-items copy consecutive chunks of a row; (jj, c) steps by L without dividing.
    for (int jj = lid / ck, c = lid % ck; jj < nj;) {
      const vec_t x = c < ck1 ? LDN(VW, k1h, (size_t)(j0 + jj) * k1_rs + c * VW)
                              : LDN(VW, k2h, (size_t)(j0 + jj) * k2_rs + (c - ck1) * VW);
      VS(x, ks, jj * dk + c * VW);
      for (c += L; c >= ck; c -= ck) ++jj;
    }
    for (int jj = lid / cv, c = lid % cv; jj < nj;) {
      VS(LDN(VW, vh, (size_t)(j0 + jj) * v_rs + c * VW), vs, jj * dv + c * VW);
      for (c += L; c >= cv; c -= cv) ++jj;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Rows innermost, so a key row is reused from cache; (jj, r) steps by L without dividing.
    for (int jj = lid / nr, r = lid % nr; jj < bk;) {
      const int j = j0 + jj;
      float s = -INFINITY;
      if (jj < nj && j >= range[2 * r] && j < range[2 * r + 1]) {
        vec_t dot = (vec_t)(0.0f);
        for (int c = 0; c < ck; ++c) dot = fma(VL(qs, r * dk + c * VW), VL(ks, jj * dk + c * VW), dot);
        s = scale * hsum(dot);
      }
      ps[r * bk + jj] = s;
      for (r += L; r >= nr; r -= nr) ++jj;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Online softmax: new running max, rescale factor for what was accumulated, probabilities.
    for (int r = lid; r < nr; r += L) {
      float mx = row_m[r];
      for (int jj = 0; jj < nj; ++jj) mx = fmax(mx, ps[r * bk + jj]);
      const float alpha = mx == -INFINITY ? 1.0f : exp(row_m[r] - mx);
      float sum = 0.0f;
      for (int jj = 0; jj < nj; ++jj) {
        const float p = mx == -INFINITY ? 0.0f : exp(ps[r * bk + jj] - mx);
        ps[r * bk + jj] = p;
        sum += p;
      }
      row_m[r] = mx;
      row_l[r] = row_l[r] * alpha + sum;
      row_a[r] = alpha;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int t = 0; t < MAXO; ++t) {
      const int e = lid + t * L;
      if (e < nr * cv) {
        const int r = e / cv, c = e % cv;
        vec_t a = acc[t] * row_a[r];
        for (int jj = 0; jj < nj; ++jj) a = fma((vec_t)(ps[r * bk + jj]), VL(vs, jj * dv + c * VW), a);
        acc[t] = a;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int t = 0; t < MAXO; ++t) {
    const int e = lid + t * L;
    if (e < nr * cv) {
      const int r = e / cv, c = e % cv, row = r0 + r;
      const int head = kvh * group + row / q_len, i = row % q_len;
      const float l = row_l[r];
      const vec_t o = l > 0.0f ? acc[t] / l : (vec_t)(0.0f);
      float part[VW];
      VS(o, part, 0);
      const size_t base = out_off + ((size_t)(b * nh + head) * q_len + i) * dv + c * VW;
      for (int x = 0; x < VW; ++x) ST(out, base + x, part[x]);
    }
  }
}
