#pragma once
// The data the attention core (cpu/attention/attention.cpp) passes between its driver and its SIMD kernel.
#include <atomic>
#include <cstdint>

namespace ts::cpu {

// An F8_E4M3 element (e4m3fn), as the core reads a quantized pool; I8 elements are int8_t.
enum class F8E4M3 : uint8_t {};

// How positions map to rows when they are not affine: a paged pool. Position j lives at slot
// j % block_size of physical block table[j / block_size]; a block's rows start block_stride elements
// after the previous block's. Within a block, a ferrum pool's key and value rows are ks1 / vs apart;
// vLLM's key cache groups x channels of a slot (groups block_size * x apart), its value cache holds
// channel d of every slot together (v_channel_major: channel d of slot s at d * block_size + s).
// Quantized pools (I8, F8_E4M3) carry one F32 scale per slot: block * s_block_stride + slot.
struct KvPaging {
  const uint32_t* table = nullptr;  // null: affine rows
  int64_t block_size = 1;
  int64_t k_block_stride = 0, v_block_stride = 0;
  int64_t x = 0;  // vLLM's key interleave; 0: a ferrum key row
  bool v_channel_major = false;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
  int64_t s_block_stride = 0;
};

// Key row j = [k1 row j (d1 elements) | k2 row j (d2, may be 0)]; value row j = v row j (dv), or the
// k1 segment when v is null (MLA). Strides count elements of the tensors' dtype. With paging, rows
// are found through the block table (k2 unused).
struct KvView {
  const void* k1;
  int64_t ks1;
  const void* k2;
  int64_t ks2;
  const void* v;
  int64_t vs;
  int64_t d1, d2, dv;
  KvPaging paging{};
};

// Whether the kernel reads a view's rows where they lie: affine rows of one key segment, or a ferrum
// pool (contiguous rows in a block). vLLM's pools and MLA's two key segments go through F32 copies.
inline bool rows_in_place(const KvView& kv) {
  return kv.paging.table ? kv.paging.x == 0 && !kv.paging.v_channel_major : kv.d2 == 0;
}

// Query rows (F32, d1 + d2 each) and the key range [lo, hi) each row sees. An I8 pool's block may
// carry its rows quantized to int8 as well (cpu/attention/int8_scores.h): codes (padded to kInt8ScoreStep),
// 128 x their sum, and their scale d; the I8 kernel then scores in integers where the CPU can.
struct AttnBlock {
  const float* const* q;
  const int64_t* lo;
  const int64_t* hi;
  int64_t rows;
  const int8_t* const* q8 = nullptr;
  const int32_t* q8_bias = nullptr;
  const float* q8_scale = nullptr;
  // Set (with q8) when a task meets a key or value scale that is not finite: the int8 route's bound
  // does not hold, and the run starts again on the exact route (AttentionRun::run).
  std::atomic<bool>* q8_abandoned = nullptr;
};

// One task: keys [j0, j1) for every row of a block, with its online-softmax state per row
// (running max m, sum l, unnormalised output acc [rows, dv]).
struct AttnTask {
  int64_t j0, j1;
  float* m;
  float* l;
  float* acc;
};

}  // namespace ts::cpu
