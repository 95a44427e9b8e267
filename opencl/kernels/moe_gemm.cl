// gemm_quant_moe_id (+ _indirect), the prefill MoE GEMM: every expert's pairs in one launch, as the tiled
// GEMM of kernels/gemm.cl (gemm_quant's tiling and slab decode) with rows gathered per expert.
// Grid: column tiles x row tiles x experts, the row tiles up to max_per_expert; group (tile, i, e) takes
// the pairs ids[e, i*TM ..] below tpe[e] (read on the device) and exits whole when i*TM >= tpe[e], so
// no stale id past tpe[e] is ever read. Pair q = t * top_k + s reads a's row at
// (q / top_k) * outer + (q % top_k) * inner (ne11 1: outer k, inner 0; ne11 top_k: top_k k, k) and
// writes out's row q.
//   the gemm.cl options; GGUF experts: -DDQ32 -DQBE -DQBB; plain ones (rows in the case dtype): -DQPLAIN
#ifdef QPLAIN
#define EXPERT_AT(e) ((size_t)(e) * n * k)  // elements of st_t
#else
#include "quant_slab.h"
#define EXPERT_AT(e) ((size_t)(e) * n * QROW_BYTES(k))  // bytes
#endif

#define B_ARGS , __global const int *ids, __global const int *tpe, int max_per_expert, int top_k, int outer, int inner
// The group's pairs are cached in local memory once; m becomes the expert's pair count.
#define GEMM_PROLOGUE                                                                        \
  __local int moe_pair[TM];                                                                  \
  const int moe_e = get_group_id(2);                                                         \
  m = tpe[moe_e];                                                                            \
  if (row0 >= m) return;                                                                     \
  b += EXPERT_AT(moe_e);                                                                     \
  for (int r = tid; r < TM; r += NT)                                                         \
    moe_pair[r] = row0 + r < m ? ids[(size_t)moe_e * max_per_expert + row0 + r] : 0;         \
  barrier(CLK_LOCAL_MEM_FENCE);
#define MOE_PAIR(row) moe_pair[(row) - row0]
#define A_AT(row) ((size_t)(MOE_PAIR(row) / top_k) * outer + (size_t)(MOE_PAIR(row) % top_k) * inner)
#define O_AT(row) ((size_t)MOE_PAIR(row) * ldo)
// The rows an expert takes vary with tpe: every access is bounds-checked.
#undef EVEN
#include "gemm.cl"
