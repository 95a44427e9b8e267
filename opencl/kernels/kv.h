// KV pool elements, which need not be the case's activation dtype (the kv family's pools are I8,
// F8_E4M3, F16 or BF16 beside F32 / F16 / BF16 activations): kv_t, KLD(p, i) (one element as F32) and
// KLDV(p, i) (VW consecutive elements as a vec_t). Codes of I8 and F8_E4M3 pools come back as the code's
// value; the caller multiplies by the row's scale. Without -DKV_<dtype> a pool is in the activation
// dtype (st_t). KST(p, i, v) stores one element: the F16 / BF16 conversions round to nearest even.
//   -DKV_I8 | -DKV_F8 | -DKV_F16 | -DKV_BF16 | -DKV_F32 (optional), after common.h; VW for KLDV.
#define CONVERT_FLOATN(n) CONVERT_FLOATN_(n)
#define CONVERT_FLOATN_(n) convert_float##n
#define UINTN(n) UINTN_(n)
#define UINTN_(n) uint##n
#define convert_float1 convert_float

#if defined(KV_I8)
typedef char kv_t;
#define KLD(p, i) convert_float((p)[i])
#define KLDV(p, i) CONVERT_FLOATN(VW)(VLOADN(VW)(0, (p) + (i)))
#elif defined(KV_F8)
typedef uchar kv_t;
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
F8_DECODE(1)
#if VW > 1
F8_DECODE(VW)
#endif
#define KLD(p, i) f8_decode1((uint)(p)[i])
#define KLDV(p, i) F8_DECODE_N(VW)(CONVERT_UINTN(VW)(VLOADN(VW)(0, (p) + (i))))
#define F8_DECODE_N(n) F8_DECODE_N_(n)
#define F8_DECODE_N_(n) f8_decode##n
#elif defined(KV_F16)
typedef half kv_t;
#define KLD(p, i) vload_half((i), (p))
#define KLDV(p, i) VLOADHN(VW)(0, (p) + (i))
#define KST(p, i, v) vstore_half_rte((v), (i), (p))
#elif defined(KV_BF16)
typedef ushort kv_t;
#define KLD(p, i) as_float((uint)(p)[i] << 16)
#define KLDV(p, i) AS_FLOATN(VW)(CONVERT_UINTN(VW)(VLOADN(VW)(0, (p) + (i))) << 16)
// Round to nearest even (the pools' values are finite).
#define KST(p, i, v) ((p)[i] = (ushort)((as_uint(v) + 0x7fffu + ((as_uint(v) >> 16) & 1u)) >> 16))
#elif defined(KV_F32)
typedef float kv_t;
#define KLD(p, i) ((p)[i])
#define KLDV(p, i) VLOADN(VW)(0, (p) + (i))
#define KST(p, i, v) ((p)[i] = (v))
#else
typedef st_t kv_t;
#define KLD(p, i) LD(p, i)
#define KLDV(p, i) LDN(VW, p, i)
#define KST(p, i, v) ST(p, i, v)
#endif
