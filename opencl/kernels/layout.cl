// Data movement, bit-exact: elements are copied as raw bits (bits_t, common.h), never converted.
// Every kernel is a strided 2-D copy of `cols` contiguous elements per row, coalesced along dim 0:
//   dst[dst_off + r * dst_stride + c] = src[src_off + r * src_stride + c]
// which covers copy_slice (one row), split_qkv (column blocks), cache appends and row gathers.
__kernel void copy_rows(__global const bits_t* src, __global bits_t* dst, int rows, int cols, int src_off,
                        int src_stride, int dst_off, int dst_stride) {
  const int c = get_global_id(0), r = get_global_id(1);
  if (c < cols && r < rows) dst[dst_off + (size_t)r * dst_stride + c] = src[src_off + (size_t)r * src_stride + c];
}

// Row gather: out[i, :] = table[ids[i], :] (ids validated by the harness before any kernel runs).
__kernel void gather_rows(__global const bits_t* table, __global const uint* ids, __global bits_t* out, int n,
                          int dim) {
  const int c = get_global_id(0), i = get_global_id(1);
  if (c < dim && i < n) out[(size_t)i * dim + c] = table[(size_t)ids[i] * dim + c];
}

// [a, b, dim] -> [b, a, dim]: dim 0 the element, dim 1 the index in b, dim 2 the index in a.
__kernel void transpose_01(__global const bits_t* src, __global bits_t* dst, int na, int nb, int dim) {
  const int c = get_global_id(0), j = get_global_id(1), i = get_global_id(2);
  if (c < dim && j < nb && i < na) dst[((size_t)j * na + i) * dim + c] = src[((size_t)i * nb + j) * dim + c];
}

// kv_cache_append_batched_per_cache, one cache: cache[h, cache_lens[item], :] = new_data[item, h, :].
__kernel void append_at_len(__global const bits_t* new_data, __global const uint* cache_lens,
                            __global bits_t* cache, int item, int nkv, int hd, int capacity) {
  const int c = get_global_id(0), h = get_global_id(1);
  if (c >= hd || h >= nkv) return;
  const int row = (int)cache_lens[item];
  cache[((size_t)h * capacity + row) * hd + c] = new_data[((size_t)item * nkv + h) * hd + c];
}
