// core/kinds.inc's lists as GLSL constants and lookups: QK_<KIND> (the QuantKind numbers), QK_<KIND>_<FIELD>
// (byte offsets in a block), KV_DTYPE_<KIND> (the KvDtype numbers), SEQS_<MODE> and ADDR_<LAYOUT> (the
// attention view's modes). GLSL has no enums and pastes no number suffix, so the constants are uints.
#ifndef TS_KINDS_GLSL
#define TS_KINDS_GLSL
#include "core/kinds.inc"

#define TS_GLSL_QK(NAME, num, id, elems, bytes, d, m, scales, qh, qs) \
  const uint QK_##NAME = uint(num);                                   \
  const uint QK_##NAME##_D = uint(d);                                 \
  const uint QK_##NAME##_M = uint(m);                                 \
  const uint QK_##NAME##_SCALES = uint(scales);                       \
  const uint QK_##NAME##_QH = uint(qh);                               \
  const uint QK_##NAME##_QS = uint(qs);                               \
  const uint QK_##NAME##_BYTES = uint(bytes);                         \
  const uint QK_##NAME##_ELEMS = uint(elems);
TS_QUANT_KINDS(TS_GLSL_QK)
const uint QK_FIRST_PLAIN = uint(TS_QUANT_FIRST_PLAIN);

#define TS_GLSL_QK_ELEMS(NAME, num, id, elems, bytes, d, m, scales, qh, qs) \
  case uint(num): return uint(elems);
#define TS_GLSL_QK_BYTES(NAME, num, id, elems, bytes, d, m, scales, qh, qs) \
  case uint(num): return uint(bytes);
uint quant_block_elems(uint kind) {
  switch (kind) { TS_QUANT_KINDS(TS_GLSL_QK_ELEMS) }
  return 0u;
}
uint quant_block_bytes(uint kind) {
  switch (kind) { TS_QUANT_KINDS(TS_GLSL_QK_BYTES) }
  return 0u;
}

#define TS_GLSL_KV(NAME, num, bytes, scaled, code_max) \
  const uint KV_DTYPE_##NAME = uint(num);              \
  const uint KV_DTYPE_##NAME##_BYTES = uint(bytes);    \
  const float KV_DTYPE_##NAME##_CODE_MAX = float(code_max);
TS_KV_DTYPES(TS_GLSL_KV)
#define TS_GLSL_KV_BYTES(NAME, num, bytes, scaled, code_max) \
  case uint(num): return uint(bytes);
#define TS_GLSL_KV_SCALED(NAME, num, bytes, scaled, code_max) \
  case uint(num): return scaled != 0;
#define TS_GLSL_KV_CODE_MAX(NAME, num, bytes, scaled, code_max) \
  case uint(num): return float(code_max);
uint kv_elem_bytes(uint kind) {
  switch (kind) { TS_KV_DTYPES(TS_GLSL_KV_BYTES) }
  return 0u;
}
// Whether a pool carries an F32 scale per (block, kv head, slot) (core/kinds.h's has_scales).
bool kv_scaled(uint kind) {
  switch (kind) { TS_KV_DTYPES(TS_GLSL_KV_SCALED) }
  return false;
}
// The largest code's magnitude of a scaled pool (0 for an unscaled one).
float kv_code_max(uint kind) {
  switch (kind) { TS_KV_DTYPES(TS_GLSL_KV_CODE_MAX) }
  return 0.0;
}

#define TS_GLSL_MODE(prefix, NAME, num) const uint prefix##NAME = uint(num);
#define TS_GLSL_SEQS(NAME, num) TS_GLSL_MODE(SEQS_, NAME, num)
#define TS_GLSL_ADDR(NAME, num) TS_GLSL_MODE(ADDR_, NAME, num)
#define TS_GLSL_DEST(NAME, num) TS_GLSL_MODE(DEST_, NAME, num)
TS_SEQ_MODES(TS_GLSL_SEQS)
TS_KV_ADDRS(TS_GLSL_ADDR)
TS_POOL_DESTS(TS_GLSL_DEST)
#endif
