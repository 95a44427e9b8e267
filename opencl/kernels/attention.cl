// Flash attention with an online softmax over key tiles held in local memory (FlashAttention-2 form).
// A work-group takes one (batch, kv head, block of BQ query rows). Its rows are the query heads of the
// kv head's GQA group times the q_len positions, flattened as row = g * q_len + i, so a K/V tile is
// read once for the whole group (decode reads each K/V byte once).
// Scores: scale * (q[:dk1] . k1[j] + q[dk1:] . k2[j]); values v[j] (dv columns). Plain attention has
// dk2 = 0; MLA's absorbed form is k1 = v = the compressed cache and k2 = the rope keys.
// Visibility (OPS.md): row at position P = pos_offset + i sees j < kv_len, j <= P when causal, and
// j >= P + 1 - window when window > 0. Only keys some row of the block sees are ever loaded.
// Local memory (floats): qs[bq][dk], kt[dk][bk] (transposed: lanes read consecutive keys), vs[bk][dv],
// ps[bq][bk], and the rows' running max, sum and rescale factor.
// Private: a work-item owns output elements lid + t * L, t < MAXO, of the bq x dv block (-DMAXO).
inline void visible_range(int i, int kv_len, int pos_offset, int causal, int window, int* lo, int* hi) {
  const int p = pos_offset + i;
  *hi = causal ? min(p + 1, kv_len) : kv_len;
  *lo = window > 0 ? max(0, p + 1 - window) : 0;
}

__kernel void flash_attn(__global const st_t* q, __global const st_t* k1, __global const st_t* k2,
                         __global const st_t* v, __global st_t* out, __global const uint* kv_lens, int kv_len_item,
                         int q_off, int out_off, int nh, int nkv, int q_len, int kv_len, int pos_offset, int causal,
                         int window, float scale, int dk1, int dk2, int dv, int k1_bs, int k1_hs, int k1_rs, int k2_bs,
                         int k2_hs, int k2_rs, int v_bs, int v_hs, int v_rs, int bq, int bk, __local float* qs,
                         __local float* kt, __local float* vs, __local float* ps, __local float* st) {
  const int lid = get_local_id(0), L = get_local_size(0);
  const int group = nh / nkv, rows = group * q_len;
  const int nblk = (rows + bq - 1) / bq;
  const int kvh = get_group_id(1) / nblk, r0 = (get_group_id(1) % nblk) * bq, b = get_group_id(2);
  const int nr = min(bq, rows - r0), dk = dk1 + dk2;
  if (kv_len_item >= 0) kv_len = (int)kv_lens[kv_len_item];
  __local float* row_m = st;
  __local float* row_l = st + bq;
  __local float* row_a = st + 2 * bq;

  // The keys any row of the block sees: [j_lo, j_hi).
  int j_lo = kv_len, j_hi = 0;
  for (int r = 0; r < nr; ++r) {
    int lo, hi;
    visible_range((r0 + r) % q_len, kv_len, pos_offset, causal, window, &lo, &hi);
    if (lo < hi) { j_lo = min(j_lo, lo); j_hi = max(j_hi, hi); }
  }

  // Query row r of the block is head kvh * group + g at position i.
  for (int e = lid; e < nr * dk; e += L) {
    const int r = e / dk, d = e % dk, row = r0 + r;
    const int head = kvh * group + row / q_len, i = row % q_len;
    qs[e] = LD(q, q_off + ((size_t)(b * nh + head) * q_len + i) * dk + d);
  }
  for (int r = lid; r < nr; r += L) { row_m[r] = -INFINITY; row_l[r] = 0.0f; }
  float acc[MAXO];
  for (int t = 0; t < MAXO; ++t) acc[t] = 0.0f;

  __global const st_t* k1h = k1 + (size_t)b * k1_bs + (size_t)kvh * k1_hs;
  __global const st_t* k2h = k2 + (size_t)b * k2_bs + (size_t)kvh * k2_hs;
  __global const st_t* vh = v + (size_t)b * v_bs + (size_t)kvh * v_hs;

  for (int j0 = j_lo; j0 < j_hi; j0 += bk) {
    const int nj = min(bk, j_hi - j0);
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous tile's readers are done
    for (int e = lid; e < nj * dk; e += L) {  // consecutive work-items read consecutive columns
      const int jj = e / dk, d = e % dk;
      kt[d * bk + jj] = d < dk1 ? LD(k1h, (size_t)(j0 + jj) * k1_rs + d) : LD(k2h, (size_t)(j0 + jj) * k2_rs + d - dk1);
    }
    for (int e = lid; e < nj * dv; e += L) {
      const int jj = e / dv, d = e % dv;
      vs[jj * dv + d] = LD(vh, (size_t)(j0 + jj) * v_rs + d);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < nr * bk; e += L) {
      const int r = e / bk, jj = e % bk, j = j0 + jj;
      int lo, hi;
      visible_range((r0 + r) % q_len, kv_len, pos_offset, causal, window, &lo, &hi);
      float s = -INFINITY;
      if (jj < nj && j >= lo && j < hi) {
        float dot = 0.0f;
        for (int d = 0; d < dk; ++d) dot = fma(qs[r * dk + d], kt[d * bk + jj], dot);
        s = scale * dot;
      }
      ps[e] = s;
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
    for (int t = 0; t < MAXO; ++t) {
      const int e = lid + t * L;
      if (e < nr * dv) {
        const int r = e / dv, d = e % dv;
        float a = acc[t] * row_a[r];
        for (int jj = 0; jj < nj; ++jj) a = fma(ps[r * bk + jj], vs[jj * dv + d], a);
        acc[t] = a;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = 0; t < MAXO; ++t) {
    const int e = lid + t * L;
    if (e < nr * dv) {
      const int r = e / dv, d = e % dv, row = r0 + r;
      const int head = kvh * group + row / q_len, i = row % q_len;
      const float l = row_l[r];
      ST(out, out_off + ((size_t)(b * nh + head) * q_len + i) * dv + d, l > 0.0f ? acc[t] / l : 0.0f);
    }
  }
}
