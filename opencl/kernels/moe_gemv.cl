// The one expert-GEMV kernel of the moe family: gemv_quant_moe_id, _offset, _batched and the
// fused gate + up + SiLU (+ _batched) differ only in how pair p finds its activation row, its expert
// and its output row, so they are this kernel with an addressing view in its arguments:
//   activation row  a[a_off + (p / top_k) * outer + (p % top_k) * inner ..]   (strided ops: top_k 1)
//   expert          ids[ids_off + p], read on the device (no host round trip after the router)
//   output row      p
// Work-group (row block, pair): rb_count blocks of R weight rows of the pair's expert, one after another (with
// -DSILU also the same rows of the up stack: 2R dots sharing the activation row), the dots of
// kernels/gemv_core.h. rb_count > 1 on CPU drivers, where a group per R rows of a short expert row would cost
// more to schedule than to run.
//   -DR -DWG -DU, the decode's options (gemv_core.h); -DSILU
#ifdef SILU
#define NR (2 * R)
#else
#define NR R
#endif
#define GM 1
#include "gemv_core.h"
#include "moe_gemv_args.h"

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void moe_gemv(__constant MoeGemvArgs* args, __global const st_t* a, __global const uchar* w, __global const uchar* up,
              __global const int* ids, __global st_t* out) {
  TS_ARGS_READ(TS_MOE_GEMV_ARGS)
  __local float red[NR][WG];
  const int lid = get_local_id(0), p = get_group_id(1);
  const size_t expert_row0 = (size_t)ids[ids_off + p] * n, row_bytes = ROW_BYTES(k);
  __global const st_t* x[1] = {a + a_off + (size_t)(p / top_k) * outer + (size_t)(p % top_k) * inner};
  for (int rb = 0; rb < rb_count; ++rb) {
    const int n0 = (get_group_id(0) * rb_count + rb) * R;
    if (n0 >= n) break;  // the same for the whole group
    // Rows past n (last block) decode row n - 1 again: no branch in the loop, results discarded.
    __global const uchar* rows[NR];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const size_t at = (expert_row0 + min(n0 + r, n - 1)) * row_bytes;
      rows[r] = w + at;
#ifdef SILU
      rows[R + r] = up + at;
#endif
    }
    gemv_dots(x, rows, k, red);
    for (int r = lid; r < R; r += WG) {
      if (n0 + r >= n) continue;
      float v = red[r][0];
#ifdef SILU
      v = v / (1.0f + exp(-v)) * red[R + r][0];
#endif
      ST(out, (size_t)p * n + n0 + r, v);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // red is read above before the next block's dots overwrite it
  }
}
