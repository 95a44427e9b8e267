// gemv_quant: out[m, n] = a[m, k] @ dequant(w)^T for small m (decode), w the GGUF rows of one kind:
// bandwidth-bound on w. A work-group owns R consecutive weight rows and dots the m activation rows
// with them (kernels/gemv_core.h: the work-items split k, a local-memory reduction finishes).
// out is written at out[i * ldo + ocol0 + row] (a column range of a wider output).
//   -DGM (= m, at most 8) -DR -DWG (a power of two) -DU (1 or QCHUNKS) -DDQ32 -DQBE -DQBB
#define NR R
#include "gemv_core.h"
#include "quant_gemv_args.h"

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gemv_quant(__constant QuantGemvArgs* args, __global const st_t* a, __global const uchar* w, __global st_t* out) {
  TS_ARGS_READ(TS_QUANT_GEMV_ARGS)
  __local float red[GM * R][WG];
  const int lid = get_local_id(0);
  const int n0 = get_group_id(0) * R;
  const size_t row_bytes = QROW_BYTES(k);
  __global const st_t* x[GM];
#pragma unroll
  for (int i = 0; i < GM; ++i) x[i] = a + (size_t)i * k;
  // Rows past n (last group) decode row n - 1 again: no branch in the loop, results discarded.
  __global const uchar* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) rows[r] = w + (size_t)min(n0 + r, n - 1) * row_bytes;
  gemv_dots(x, rows, k, red);
  for (int j = lid; j < GM * R; j += WG) {
    const int i = j / R, r = j % R;
    if (n0 + r < n) ST(out, (size_t)i * ldo + ocol0 + n0 + r, red[j][0]);
  }
}
