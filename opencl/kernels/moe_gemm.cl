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
// The group's pairs and their activation rows' offsets are looked up once, into local memory; m becomes
// the expert's pair count.
#define GEMM_PROLOGUE                                                                   \
  __local int moe_pair[TM];                                                             \
  __local ulong moe_a[TM];                                                              \
  const int moe_e = get_group_id(2);                                                    \
  m = tpe[moe_e];                                                                       \
  if (row0 >= m) return;                                                                \
  b += EXPERT_AT(moe_e);                                                                \
  for (int r = tid; r < TM; r += NT) {                                                  \
    const int q = row0 + r < m ? ids[(size_t)moe_e * max_per_expert + row0 + r] : 0;    \
    moe_pair[r] = q;                                                                    \
    moe_a[r] = (ulong)(q / top_k) * outer + (ulong)(q % top_k) * inner;                 \
  }                                                                                     \
  barrier(CLK_LOCAL_MEM_FENCE);
#define A_AT(row) moe_a[(row) - row0]
#define O_AT(row) ((size_t)moe_pair[(row) - row0] * ldo)
// The rows an expert takes vary with tpe: never the EVEN path. GGUF rows: k a multiple of TK (the
// planner's tile), so a's rows are staged whole.
#undef EVEN
#ifndef QPLAIN
#define EVEN_K
#endif
#include "gemm.cl"
