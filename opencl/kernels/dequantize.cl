// dequantize: out[n_rows, n_cols] F32 = the GGUF blocks of each row decoded (kernels/quant.h), one
// work-item per 32 values: work-items side by side read consecutive blocks of a row.
//   -DDQ32 -DQBE -DQBB (the kind, quant.h)
#include "quant.h"

__kernel void dequantize_rows(__global const uchar* bytes, __global float* out, int n_rows, int n_cols) {
  const int c = get_global_id(0), row = get_global_id(1);
  if (c >= n_cols / 32 || row >= n_rows) return;
  float16 lo, hi;
  DQ32_AT(bytes + (size_t)row * QROW_BYTES(n_cols), c, &lo, &hi);
  __global float* o = out + (size_t)row * n_cols + (size_t)c * 32;
  vstore16(lo, 0, o);
  vstore16(hi, 0, o + 16);
}
