// The tiled GEMM's weight staging for GGUF rows (kernels/gemm.cl's STAGE_B): the k slab of TN rows
// decoded from their blocks (kernels/quant.h) into local memory once per slab, then reused by the whole
// work-group. Work-items take the (row, 32-value chunk) pieces of the slab in turn, consecutive chunks
// of a row side by side. TK is a multiple of 32 dividing k. Shared by gemm_quant and the MoE GEMM.
//   -DDQ32 -DQBE -DQBB
#include "quant.h"

// bs[TK][TN] = the slab of rows col0 .. col0 + TN, values k0 .. k0 + TK, transposed; zeros past n.
inline void stage_quant_slab(__global const uchar* w, __local float* bs, int col0, int k0, int n, int k, int tid,
                             int threads) {
  const size_t row_bytes = QROW_BYTES(k);
  for (int e = tid; e < TN * (TK / 32); e += threads) {
    const int r = e / (TK / 32), c = e % (TK / 32);
    float16 lo = (float16)(0.0f), hi = (float16)(0.0f);
    if (col0 + r < n) DQ32_AT(w + (size_t)(col0 + r) * row_bytes, k0 / 32 + c, &lo, &hi);
    float v[32];
    vstore16(lo, 0, v);
    vstore16(hi, 0, v + 16);
    for (int q = 0; q < 32; ++q) bs[(c * 32 + q) * TN + r] = v[q];
  }
}

#define B_T uchar
#define STAGE_B(b, bs, col0, k0, n, k, tid) stage_quant_slab((b), (bs), (col0), (k0), (n), (k), (tid), NT)
