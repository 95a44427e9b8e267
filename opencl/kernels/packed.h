// The integer packings of GPTQ and AWQ checkpoints (core/quant/packing.h), one weight at a time:
// W[k, j] = scales[g, j] * (q[k, j] - zero[g, j]), an f16 scale times a small integer (exact in F32).
// Shared by the column kernel (gptq.cl) and the tiled GEMM's slab staging (gptq_gemm.cl).
//   -DBITS (4 or 8), and -DAWQ (AutoAWQ's packing; otherwise AutoGPTQ's) or -DACT (GPTQ act-order:
//   the group of row k is g_idx[k]; otherwise k / group_size)
#define PER (32 / BITS)
#define MASK ((1u << BITS) - 1u)

#ifdef AWQ
// Column c of eight sits in nibble slot 0 2 4 6 1 3 5 7 -> c: slot(c) = 4 * (c % 2) + c / 2.
inline uint awq_field(__global const int* p, int row, int n, int j) {
  const int c = j % 8;
  return ((uint)p[(size_t)row * (n / 8) + j / 8] >> (4 * (4 * (c % 2) + c / 2))) & 15u;
}
#define PACKED_CODE(qw, kk, n, j) awq_field((qw), (kk), (n), (j))
// The eight codes of one word, columns in order (its nibbles in slot order).
inline uint8 awq_codes8(uint word) { return ((uint8)(word) >> (uint8)(0, 16, 4, 20, 8, 24, 12, 28)) & (uint8)(15u); }
// The codes of columns j0 .. j0 + 7 (j0 % 8 == 0): one word.
#define PACKED_CODES8(qw, kk, n, j0) awq_codes8((uint)(qw)[(size_t)(kk) * ((n) / 8) + (j0) / 8])
#define PACKED_ZERO(qz, g, n, j) ((int)awq_field((qz), (g), (n), (j)))
#else
// GPTQ packs codes along k and zeros along n; a stored zero is the zero minus one.
#define PACKED_CODE(qw, kk, n, j) (((uint)(qw)[(size_t)((kk) / PER) * (n) + (j)] >> (BITS * ((kk) % PER))) & MASK)
#define PACKED_ZERO(qz, g, n, j) \
  ((int)(((uint)(qz)[(size_t)(g) * ((n) / PER) + (j) / PER] >> (BITS * ((j) % PER))) & MASK) + 1)
// The codes of columns j0 .. j0 + 7: eight consecutive words, the same field of each.
#define PACKED_CODES8(qw, kk, n, j0) \
  ((as_uint8(vload8(0, (qw) + (size_t)((kk) / PER) * (n) + (j0))) >> (uint8)(BITS * ((kk) % PER))) & (uint8)(MASK))
#endif

#ifdef ACT
#define PACKED_GROUP(g_idx, kk, group_size) ((g_idx)[kk])
#else
#define PACKED_GROUP(g_idx, kk, group_size) ((kk) / (group_size))
#endif

inline float packed_weight(__global const int* qweight, __global const half* scales, __global const int* qzeros,
                           __global const int* g_idx, int n, int group_size, int kk, int j) {
  const int g = PACKED_GROUP(g_idx, kk, group_size);
  return vload_half((size_t)g * n + j, scales) * (float)((int)PACKED_CODE(qweight, kk, n, j) - PACKED_ZERO(qzeros, g, n, j));
}
