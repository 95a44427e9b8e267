#pragma once
// The cpu backend's KV-pool quantizers (cpu/attention/kv_append.cpp), exported for their exactness
// test (tests/cpu_kv_quantize_test.cpp), and the append's job, which its SIMD targets share.
#include <cstddef>
#include <cstdint>

#include "core/dtype.h"

namespace ts::cpu {

// codes[i] = f32_to_f8e4m3(x[i] / scale) (core/dtype.h: e4m3fn, nearest even, saturating at 448), in
// SIMD lanes on the best target the CPU has (TOUCHSTONE_CPU_SIMD caps it). scale > 0.
void quantize_f8e4m3(const float* x, int64_t n, float scale, uint8_t* codes);

// codes[i] = round_half_away(x[i] / scale) clamped to [-127, 127] (the reference's I8 pool codes),
// likewise. scale > 0.
void quantize_i8(const float* x, int64_t n, float scale, int8_t* codes);

// kv_append_paged's rows as its kernel walks them: rows (token, kv head) of k_in, then of v_in, each
// into slot (block_indices[pos / block_size] * heads + head) * block_size + pos % block_size of its
// pool, pos = cache_len_before + token; quantized pools take the row's scale at the same index.
struct KvAppendSide {
  const float* x;
  std::byte* pool;
  float* scales;  // null for F16 / BF16 pools
};
struct KvAppendJob {
  KvAppendSide side[2];
  DType dtype = DType::F32;
  size_t elem_size = 0;
  const uint32_t* block_indices = nullptr;
  int64_t rows = 0;  // per side: tokens * heads
  int64_t heads = 0, head_dim = 0, block_size = 0, cache_len_before = 0;
  bool stream = false;  // write the slots with streaming stores (a large append)
};

// Rows [r0, r1) of a job (of 2 * rows: k's, then v's), as one thread's share of kv_append_paged; any
// split of [0, 2 * rows) writes the same pools and scales (tested: a share may start inside a token).
void append_kv_rows(const KvAppendJob& job, int64_t r0, int64_t r1);

}  // namespace ts::cpu
