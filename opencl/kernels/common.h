// Shared by every kernel file (prepended at build time): the storage type of the case's dtype and
// its loads and stores. F16 and BF16 are storage only; all arithmetic is F32.
//   -DDT_F32 | -DDT_F16 | -DDT_BF16
// Vector type and built-in names of width n (n = 1, 2, 4, 8, 16; n may be a macro such as VW). The
// name is pasted from a literal token, never from an argument, since a driver may define the bare
// name (vload, ...) as a macro of its own.
#define FLOATN(n) FLOATN_(n)
#define FLOATN_(n) float##n
#define INTN(n) INTN_(n)
#define INTN_(n) int##n
#define VLOADN(n) VLOADN_(n)
#define VLOADN_(n) vload##n
#define VSTOREN(n) VSTOREN_(n)
#define VSTOREN_(n) vstore##n
#define VLOADHN(n) VLOADHN_(n)
#define VLOADHN_(n) vload_half##n
#define VSTOREHN(n) VSTOREHN_(n)
#define VSTOREHN_(n) vstore_half##n##_rte
#define CONVERT_UINTN(n) CONVERT_UINTN_(n)
#define CONVERT_UINTN_(n) convert_uint##n
#define AS_FLOATN(n) AS_FLOATN_(n)
#define AS_FLOATN_(n) as_float##n

// Width-1 spellings of the vector types and built-ins, so that kernels generic in a vector width
// also build with width 1.
typedef float float1;
typedef uint uint1;
typedef int int1;
#define vload1(o, p) ((p)[o])
#define vstore1(v, o, p) ((p)[o] = (v))
#define vload_half1(o, p) vload_half((o), (p))
#define vstore_half1_rte(v, o, p) vstore_half_rte((v), (o), (p))
#define convert_uint1 convert_uint
#define as_float1 as_float

// LDN(n, p, i): n consecutive elements from p + i as a floatn (n = 2, 4, 8, 16).
// bits_t: the element as raw bits, for the data-movement kernels (bit-exact, NaN payloads kept).
#if defined(DT_F16)
typedef half st_t;
typedef ushort bits_t;
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half_rte((v), (i), (p))
#define LD4(p, i) vload_half4(0, (p) + (i))
#define LDN(n, p, i) VLOADHN(n)(0, (p) + (i))
#define STN(n, p, i, v) VSTOREHN(n)((v), 0, (p) + (i))
#define ST4(p, i, v) vstore_half4_rte((v), 0, (p) + (i))
#elif defined(DT_BF16)
typedef ushort st_t;
typedef ushort bits_t;
inline float bf16_to_f32(ushort b) { return as_float((uint)b << 16); }
// Round to nearest even; a NaN stays a (quiet) NaN instead of rounding into infinity.
inline ushort f32_to_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
#define LD(p, i) bf16_to_f32((p)[i])
#define ST(p, i, v) ((p)[i] = f32_to_bf16(v))
#define LD4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define LDN(n, p, i) AS_FLOATN(n)(CONVERT_UINTN(n)(VLOADN(n)(0, (p) + (i))) << 16)
#define STN(n, p, i, v) \
  do { float t_[n]; VSTOREN(n)((v), 0, t_); for (int q_ = 0; q_ < n; ++q_) ST(p, (i) + q_, t_[q_]); } while (0)
#define ST4(p, i, v) \
  do { float4 v4_ = (v); ST(p, (i), v4_.x); ST(p, (i) + 1, v4_.y); ST(p, (i) + 2, v4_.z); ST(p, (i) + 3, v4_.w); } while (0)
#else
typedef float st_t;
typedef uint bits_t;
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define LD4(p, i) vload4(0, (p) + (i))
#define LDN(n, p, i) VLOADN(n)(0, (p) + (i))
#define STN(n, p, i, v) VSTOREN(n)((v), 0, (p) + (i))
#define ST4(p, i, v) vstore4((v), 0, (p) + (i))
#endif

// Sum (max) of `v` over the work-group (size G, a power of two) through `red` (G floats of local
// memory). Every work-item gets the result; `red` is free again on return.
#define WG_REDUCE(name, combine)                              \
  inline float name(float v, __local float* red) {            \
    const int lid = get_local_id(0);                          \
    red[lid] = v;                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                             \
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {     \
      if (lid < s) red[lid] = combine(red[lid], red[lid + s]); \
      barrier(CLK_LOCAL_MEM_FENCE);                           \
    }                                                         \
    const float total = red[0];                               \
    barrier(CLK_LOCAL_MEM_FENCE);                             \
    return total;                                             \
  }
#define WG_ADD(a, b) ((a) + (b))
WG_REDUCE(wg_sum, WG_ADD)
WG_REDUCE(wg_max, fmax)
