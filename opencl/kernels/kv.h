// KV pool elements, which need not be the case's activation dtype (the kv family's pools are I8,
// F8_E4M3, F16 or BF16 beside F32 / F16 / BF16 activations).
// Loads (the attention engine): KLD(p, i) one element as F32, KLDV(p, i) VW consecutive elements as a
// vector; codes of I8 and F8_E4M3 pools come back as the code's value (the caller applies the row's
// scale). Without a define a pool is in the activation dtype (st_t); -DKV_ANY picks it at run time.
// Stores (kv_append): -DKV_I8 | -DKV_F8_E4M3 | -DKV_F16 | -DKV_BF16 (KV_ and the KvDtype's name) give
// kv_t, and KST(p, i, v) for the converted kinds (F16 / BF16 round to nearest even).
#include "kinds.h"
#define CONVERT_FLOATN(n) CONVERT_FLOATN_(n)
#define CONVERT_FLOATN_(n) convert_float##n
#define UINTN(n) UINTN_(n)
#define UINTN_(n) uint##n
#define convert_float1 convert_float
#define F8_DECODE_N(n) F8_DECODE_N_(n)
#define F8_DECODE_N_(n) f8_decode##n

// e4m3fn codes in lanes: a normal code's exponent and mantissa shifted into an F32's fields with the
// bias moved from 7 to 127; exponent 0 is m x 2^-9 (computed, not a float subnormal a GPU may flush);
// 0x7f / 0xff are NaN.
#define F8_DECODE(n) F8_DECODE_(n)
#define F8_DECODE_(n)                                                                                 \
  inline FLOATN(n) f8_decode##n(UINTN(n) c) {                                                         \
    const UINTN(n) mag = c & 0x7fu;                                                                   \
    const FLOATN(n) normal = AS_FLOATN(n)(((c & 0x80u) << 24) | ((mag << 20) + (120u << 23)));        \
    const FLOATN(n) sub = copysign(CONVERT_FLOATN(n)(mag & 7u) * 0x1p-9f, normal);                    \
    const FLOATN(n) x = select(normal, sub, (mag >> 3) == 0u);                                       \
    return select(x, (FLOATN(n))(NAN), mag == 0x7fu);                                                 \
  }

#if defined(KV_I8)
typedef char kv_t;
#elif defined(KV_F8_E4M3)
typedef uchar kv_t;
#elif defined(KV_ANY)
// The pool's element type chosen at run time by kv_kind (an argument: a KV_DTYPE_*, kinds.h), the
// branch uniform over the launch: one program per activation dtype serves every pool dtype (each
// program costs seconds to build on a CPU driver).
typedef uchar kv_t;
F8_DECODE(1)
inline float kv_load1(__global const uchar* p, size_t i, int kind) {
  switch (kind) {
    case KV_DTYPE_F16: return vload_half(i, (__global const half*)p);
    case KV_DTYPE_BF16: return as_float((uint)((__global const ushort*)p)[i] << 16);
    case KV_DTYPE_I8: return convert_float(((__global const char*)p)[i]);
    default: return f8_decode1((uint)p[i]);  // KV_DTYPE_F8_E4M3
  }
}
#define KLD(p, i) kv_load1((p), (i), kv_kind)
#ifdef VW
#if VW > 1
F8_DECODE(VW)
#endif
inline FLOATN(VW) kv_loadv(__global const uchar* p, size_t i, int kind) {
  switch (kind) {
    case KV_DTYPE_F16: return VLOADHN(VW)(0, (__global const half*)p + i);
    case KV_DTYPE_BF16: return AS_FLOATN(VW)(CONVERT_UINTN(VW)(VLOADN(VW)(0, (__global const ushort*)p + i)) << 16);
    case KV_DTYPE_I8: return CONVERT_FLOATN(VW)(VLOADN(VW)(0, (__global const char*)p + i));
    default: return F8_DECODE_N(VW)(CONVERT_UINTN(VW)(VLOADN(VW)(0, p + i)));  // KV_DTYPE_F8_E4M3
  }
}
#define KLDV(p, i) kv_loadv((p), (i), kv_kind)
#endif
#elif defined(KV_F16)
typedef half kv_t;
#define KST(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(KV_BF16)
typedef ushort kv_t;
// Round to nearest even (the pools' values are finite).
#define KST(p, i, v) ((p)[i] = (ushort)((as_uint(v) + 0x7fffu + ((as_uint(v) >> 16) & 1u)) >> 16))
#else
typedef st_t kv_t;
#define KLD(p, i) LD(p, i)
#define KLDV(p, i) LDN(VW, p, i)
#endif
