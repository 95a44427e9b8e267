#pragma once
// The GGUF block formats touchstone implements: one row per kind with its block size in values and in
// bytes and its reference functions. The sizes and the layouts (ggml's, ggml-common.h, so the bytes of
// a real GGUF tensor load unchanged) are core/kinds.inc's, the one list the kernels expand too.
// Everything that needs a block size (validation of row bytes, generators, cost models, backends'
// planners) reads this table, so a kind is described once.
// The table and its functions are defined in reference/quant_blocks.cpp, compiled with the
// reference's flags (no FMA contraction, no fast-math).
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/kinds.h"

namespace ts::quant {

// Values per block of the legacy kinds (Q4_0, Q4_1, Q8_0) and per super-block of the k-quants.
inline constexpr int64_t kQK = kind_row(QuantKind::Q4_0).block_elems;
inline constexpr int64_t kQK_K = kind_row(QuantKind::Q4_K).block_elems;

// Dequantizes `n` values (a multiple of the kind's block) from `blocks` into `out`.
using DequantizeRowFn = void (*)(const uint8_t* blocks, float* out, int64_t n);
// Quantizes `n` values (a multiple of the kind's block) from `x` into `blocks`, as ggml's
// quantize_row_*_ref does (no importance matrix): the bytes llama.cpp's quantizer writes.
using QuantizeRowFn = void (*)(const float* x, uint8_t* blocks, int64_t n);

struct Format {
  QuantKind kind;
  int64_t block_elems;  // values per block
  int64_t block_bytes;  // bytes per block
  DequantizeRowFn dequantize_row;
  QuantizeRowFn quantize_row;
  // Byte offsets of the block's f16 scales (d, then m or dmin; Q6_K's d is last), -1 for none:
  // generators write finite scales there when they fill blocks with random bits.
  std::array<int16_t, 2> f16_scales;
};

// The row of a GGUF block kind; nullptr for the plain kinds (F32, F16, BF16), which have no blocks.
const Format* format(QuantKind k);

// The row of a block kind, or an Error naming `what` (the parameter) and the kinds that have blocks.
const Format& block_format(QuantKind k, const char* what = "kind");

// Bytes of one row of n_cols values (n_cols a multiple of the block: check with check_row first).
inline int64_t row_bytes(const Format& f, int64_t n_cols) { return n_cols / f.block_elems * f.block_bytes; }

// An Error unless n_cols is a positive multiple of the kind's block size, naming `what` (the
// parameter) and the block size expected.
void check_row(const Format& f, int64_t n_cols, const char* what = "n_cols");

}  // namespace ts::quant
