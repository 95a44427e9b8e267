// core/kinds.inc's lists as OpenCL C enums and lookups: QK_<KIND> (the QuantKind numbers),
// QK_<KIND>_<FIELD> (byte offsets in a block, -1: none), QK_<KIND>_BYTES / _ELEMS, KV_DTYPE_<KIND> (the
// KvDtype numbers; _BYTES, _CODE_MAX), SEQ_<MODE> and ADDR_<LAYOUT> (the attention view's modes).
#ifndef TS_OPENCL_KINDS_H
#define TS_OPENCL_KINDS_H
#include "core/kinds.inc"

#define TS_CL_QK(NAME, num, id, elems, bytes, d, m, scales, qh, qs)                                 \
  QK_##NAME = num, QK_##NAME##_D = d, QK_##NAME##_M = m, QK_##NAME##_SCALES = scales, QK_##NAME##_QH = qh, \
  QK_##NAME##_QS = qs, QK_##NAME##_BYTES = bytes, QK_##NAME##_ELEMS = elems,
enum { TS_QUANT_KINDS(TS_CL_QK) QK_FIRST_PLAIN = TS_QUANT_FIRST_PLAIN };

#define TS_CL_KV(NAME, num, bytes, scaled, code_max) \
  KV_DTYPE_##NAME = num, KV_DTYPE_##NAME##_BYTES = bytes, KV_DTYPE_##NAME##_CODE_MAX = code_max,
enum { TS_KV_DTYPES(TS_CL_KV) };
#define TS_CL_KV_SCALED(NAME, num, bytes, scaled, code_max) \
  case num: return scaled != 0;
#define TS_CL_KV_CODE_MAX(NAME, num, bytes, scaled, code_max) \
  case num: return (float)(code_max);
// Whether a pool carries an F32 scale per (block, kv head, slot) (core/kinds.h's has_scales).
inline bool kv_scaled(int kind) {
  switch (kind) { TS_KV_DTYPES(TS_CL_KV_SCALED) }
  return false;
}
// The largest code's magnitude of a scaled pool (0 for an unscaled one).
inline float kv_code_max(int kind) {
  switch (kind) { TS_KV_DTYPES(TS_CL_KV_CODE_MAX) }
  return 0.0f;
}

#define TS_CL_SEQ(NAME, num) SEQ_##NAME = num,
#define TS_CL_ADDR(NAME, num) ADDR_##NAME = num,
#define TS_CL_DEST(NAME, num) DEST_##NAME = num,
enum { TS_SEQ_MODES(TS_CL_SEQ) TS_KV_ADDRS(TS_CL_ADDR) TS_POOL_DESTS(TS_CL_DEST) };
#endif
