#pragma once
// The decode GEMV of gemm_gptq and gemm_awq on their weights repacked at prepare time into tiles of 32
// columns, each tile one contiguous stream a thread reads front to back, with the codes of a column's
// consecutive rows packed in one word (AutoGPTQ's own order along k; AutoAWQ's words, which hold 8
// columns of one row, are transposed into it). Act-order is undone at the same time: the rows are
// sorted by group, so each group is one run of rows and the activations are gathered in that order
// once per call. The repack moves bytes and adds none (unless a group's run must be padded to a
// multiple of 32 rows, which checkpoints' groups of 32, 64 or 128 rows never need).
//
// The activations are quantized per call to int8 in blocks of 32 (sorted) rows, d = amax / 127, so
// the inner loop is integer multiply-adds of the codes (cpu/quant/gptq_tile_gemv.cpp); a group folds its
// scale and zero in once per column:
//   sum_k a_k s (q_k - z) = s * (sum_b d_b sum_(k in b) q8_k q_k - z * sum_b d_b sum_(k in b) q8_k).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/ops/quant_params.h"
#include "core/tensor.h"

namespace ts::cpu {

inline constexpr int64_t kTileCols = 32;  // columns per tile
inline constexpr int64_t kActBlock = 32;  // rows per activation scale (and per group run's padding)

// One group's rows in sorted order: rows [first, first + rows) of the tiles, rows a multiple of 32.
struct TileRun {
  int32_t group;
  int64_t first, rows;
};

struct GroupTiles {
  int bits = 4;          // 4 or 8: 32 / bits rows per word
  int zero_offset = 0;   // added to a stored zero field: 1 for AutoGPTQ (stored minus one), 0 for AWQ
  int64_t k = 0, n = 0;  // the weight's shape
  int64_t rows = 0;      // sorted rows, padding included
  int64_t tiles = 0;     // ceil(n / 32)
  std::vector<int32_t> source;  // [rows]: the row of the activations each sorted row takes, -1 padding
  bool in_order = false;        // source is 0, 1, .. k - 1: the activations are read in place
  std::vector<TileRun> runs;
  // [tiles][rows / per][32] words: word (w, c) holds the codes of sorted rows per*w .. per*w + per - 1
  // of column c, row per*w + t at bit bits * t (zero codes past n and in padding rows). In tensor
  // memory (2 MiB aligned, advised for huge pages, as the case's own weights are): the GEMV streams
  // them, and in 4 KiB pages each page was a TLB miss.
  std::vector<uint32_t, CacheLineAllocator<uint32_t>> codes;
  // [tiles][runs] heads of kHeadBytes: the run's 32 f16 scales, then its 32 stored zero fields
  // (8-bit: one byte each; 4-bit: 16 bytes, column c in byte c % 16, low nibble for c < 16).
  std::vector<uint8_t, CacheLineAllocator<uint8_t>> heads;
  int64_t rows_per_word() const { return 32 / bits; }
  int64_t head_bytes() const { return 2 * kTileCols + kTileCols * bits / 8; }
  int64_t tile_words() const { return rows / rows_per_word() * kTileCols; }
};

std::shared_ptr<const GroupTiles> tile_gptq(const GptqParams& p, TensorMap& t);
std::shared_ptr<const GroupTiles> tile_awq(const AwqParams& p, TensorMap& t);

// m <= 4 rows of activations in the tiles' sorted row order, quantized to int8 per 32 rows and laid
// out for the integer dot of the code width: 4-bit, each 8 rows as q0 q2 q4 q6 q1 q3 q5 q7 (int8);
// 8-bit, each 4 rows as q0 q2 q1 q3 (int16). Pairs of rows one word apart meet in one multiply-add.
struct TileActivations {
  int64_t m = 0;
  std::vector<int8_t> q8;    // [m][rows], 4-bit codes
  std::vector<int16_t> q16;  // [m][rows], 8-bit codes
  std::vector<float> d;      // [m][rows / 32]
  std::vector<float> run_sum;  // [m][runs]: sum over the run's blocks of d * (sum of the block's q)
};

// False when an activation is not finite (the int8 scale would be meaningless): run the exact GEMV.
bool quantize_activations(const GroupTiles& w, const float* a, int64_t m, TileActivations& out);

// out[i * ldo + j] = a[i] . W[:, j] for the m <= 4 activation rows, all n columns, threads over tiles.
void tile_gemv(const GroupTiles& w, const TileActivations& a, float* out, int64_t ldo);

}  // namespace ts::cpu
