#pragma once
// The pools of the kv family (ferrum layout, elements of kv_dtype, F32 scales per (block, kv head,
// slot) for I8 and F8_E4M3): their tensors and a generator that fills the used positions with
// quantized N(0,1) rows and poisons the rest.
#include <cstdint>
#include <vector>

#include "core/ops/describe.h"
#include "core/ops/paged/pool.h"

namespace ts::kvq {

// layer_k, layer_v [num_blocks, num_kv_heads, block_size, head_dim] of kv_dtype, then (I8, F8_E4M3)
// layer_k_scales, layer_v_scales F32 [num_blocks, num_kv_heads, block_size]; `role` In or InOut.
std::vector<TensorDecl> pool_decls(KvDtype k, const paged::Pool& pool, Role role);

// Positions [0, len) of the sequence whose blocks `table` lists hold N(0,1) rows stored through
// store_row (position 0 of kv head 0 a zero row, scale 0; for I8 / F8_E4M3, positions 1 .. 4 of kv
// head 0 every code in turn); every other slot is NaN (F16, BF16,
// F8_E4M3) or random bytes with a NaN scale (I8), so a read of one shows.
void fill_pools(KvDtype k, const paged::Pool& pool, TensorMap& t, const Tensor& table, int64_t len, Rng& r);

}  // namespace ts::kvq
