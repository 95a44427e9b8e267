// gemm_gptq / gemm_awq: out[m, n] = a[m, k] @ W, W[k, j] = scales[g, j] * (q[k, j] - zero[g, j]), the
// packings of core/quant/packing.h. One work-item per output column j and block of GM rows of a:
// work-items side by side take consecutive columns, so their reads of qweight, scales and qzeros are
// consecutive words. Each weight is decoded once per work-item (f16 scale times a small integer: exact
// in F32) and used for its GM rows.
//   -DBITS (4 or 8) -DGM (rows of a per work-item) and -DAWQ (AutoAWQ's packing; otherwise AutoGPTQ's)
//   or -DACT (GPTQ act-order: the group of row k is g_idx[k]).
#define PER (32 / BITS)
#define MASK ((1u << BITS) - 1u)

#ifdef AWQ
// Column c of eight sits in nibble slot 0 2 4 6 1 3 5 7 -> c: slot(c) = 4 * (c % 2) + c / 2.
inline uint awq_field(__global const int* p, int row, int n, int j) {
  const int c = j % 8;
  return ((uint)p[(size_t)row * (n / 8) + j / 8] >> (4 * (4 * (c % 2) + c / 2))) & 15u;
}
#define CODE(qw, kk, n, j) awq_field((qw), (kk), (n), (j))
#define ZERO(qz, g, n, j) ((int)awq_field((qz), (g), (n), (j)))
#else
// GPTQ packs codes along k and zeros along n; a stored zero is the zero minus one.
#define CODE(qw, kk, n, j) (((uint)(qw)[(size_t)((kk) / PER) * (n) + (j)] >> (BITS * ((kk) % PER))) & MASK)
#define ZERO(qz, g, n, j) \
  ((int)(((uint)(qz)[(size_t)(g) * ((n) / PER) + (j) / PER] >> (BITS * ((j) % PER))) & MASK) + 1)
#endif

__kernel void gemm_packed(__global const st_t* a, __global const int* qweight, __global const half* scales,
                          __global const int* qzeros, __global const int* g_idx, __global st_t* out, int m, int n,
                          int k, int group_size) {
  const int j = get_global_id(0), i0 = get_global_id(1) * GM;
  if (j >= n) return;
  const int rows = min(GM, m - i0);
  float acc[GM];
  for (int i = 0; i < GM; ++i) acc[i] = 0.0f;
  int g_prev = -1;
  float scale = 0.0f;
  int zero = 0;
  for (int kk = 0; kk < k; ++kk) {
#ifdef ACT
    const int g = g_idx[kk];
#else
    const int g = kk / group_size;
#endif
    if (g != g_prev) {  // once per group without act-order
      scale = vload_half((size_t)g * n + j, scales);
      zero = ZERO(qzeros, g, n, j);
      g_prev = g;
    }
    const float w = scale * (float)((int)CODE(qweight, kk, n, j) - zero);
    for (int i = 0; i < GM; ++i)
      if (i < rows) acc[i] = fma(LD(a, (size_t)(i0 + i) * k + kk), w, acc[i]);
  }
  for (int i = 0; i < rows; ++i) ST(out, (size_t)(i0 + i) * n + j, acc[i]);
}
