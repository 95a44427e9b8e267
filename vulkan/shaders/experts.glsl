// Rows of a stacked expert weight tensor [E, n_rows, n_cols], for the MoE kernels (moe_gemv.comp and
// gemm_quant.comp's MoE build): a GGUF kind (the row's blocks, decoded by quant.glsl, the one decoder
// every quant shader shares) or a plain F32 / F16 / BF16 stack. Both are read through quant.glsl's
// QUANT_WORD (uint words), so one binding type serves every kind and the kind stays a specialization
// constant. A plain row of 16-bit values need not start on a word: values are addressed one by one.
//
// Units: weight_row_base gives a GGUF row's first byte, or a plain row's first element; the values
// come out in quant.glsl's 16-value chunks, plain chunks zero-filled past n_cols (plain n_cols may be
// any count; a GGUF n_cols is a multiple of its block, itself a multiple of 16).
#include "quant.glsl"

// The plain kinds (QK_F32, QK_F16, QK_BF16) number after every GGUF one (core/kinds.inc).
bool weight_plain(uint kind) { return kind >= QK_FIRST_PLAIN; }

uint weight_row_base(uint kind, uint row, uint n_cols) {
  return weight_plain(kind) ? row * n_cols : row * quant_row_bytes(kind, n_cols);
}

// The 16-value chunks of a row: plain rows round up (the tail zero-filled).
uint weight_chunks(uint kind, uint n_cols) { return weight_plain(kind) ? (n_cols + 15u) / 16u : n_cols / 16u; }

float plain_weight(uint kind, uint idx) {
  if (kind == QK_F32) return uintBitsToFloat(QUANT_WORD(idx));
  const uint h = QUANT_WORD(idx >> 1) >> ((idx & 1u) * 16u);
  if (kind == QK_F16) return unpackHalf2x16(h).x;
  return uintBitsToFloat(h << 16);  // BF16
}

// Values 16c .. 16c + 15 of the row at `base` (weight_row_base); plain values past n_cols are 0.
void weight_decode16(uint kind, uint base, uint c, uint n_cols, out float v[16]) {
  if (!weight_plain(kind)) {
    quant_decode16(kind, base, c, v);
    return;
  }
  for (uint e = 0u; e < 16u; ++e) {
    const uint col = c * 16u + e;
    v[e] = 0.0;
    if (col < n_cols) v[e] = plain_weight(kind, base + col);  // an if, so no load is speculated
  }
}
