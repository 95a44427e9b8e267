// gemm_gptq / gemm_awq (prefill): the tiled GEMM of kernels/gemm.cl with the weight's k slab decoded
// from its packing (kernels/packed.h) into local memory once per slab, reused by the whole work-group.
// W is [k, n] with n the output column, so bs[kk][r] = W[k0 + kk, col0 + r]: work-items side by side
// take consecutive columns (consecutive words of qweight and scales).
//   the gemm.cl options and those of packed.h
#include "packed.h"

inline void stage_packed_slab(__global const int* qweight, __local float* bs, int col0, int k0, int n, int k,
                              int tid, int threads, __global const half* scales, __global const int* qzeros,
                              __global const int* g_idx, int group_size) {
  for (int e = tid; e < TK * TN; e += threads) {
    const int kk = e / TN, r = e % TN;
    bs[e] = (col0 + r < n && k0 + kk < k)
                ? packed_weight(qweight, scales, qzeros, g_idx, n, group_size, k0 + kk, col0 + r)
                : 0.0f;
  }
}

#define B_T int
#define B_ARGS , __global const half *scales, __global const int *qzeros, __global const int *g_idx, int group_size
#define STAGE_B(b, bs, col0, k0, n, k, tid) \
  stage_packed_slab((b), (bs), (col0), (k0), (n), (k), (tid), NT, scales, qzeros, g_idx, group_size)
#include "gemm.cl"
