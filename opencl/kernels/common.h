// Shared by every kernel file (prepended at build time): the storage type of the case's dtype and
// its loads and stores. F16 and BF16 are storage only; all arithmetic is F32.
//   -DDT_F32 | -DDT_F16 | -DDT_BF16
// bits_t: the element as raw bits, for the data-movement kernels (bit-exact, NaN payloads kept).
#if defined(DT_F16)
typedef half st_t;
typedef ushort bits_t;
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half_rte((v), (i), (p))
#define LD4(p, i) vload_half4(0, (p) + (i))
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
#define ST4(p, i, v) \
  do { float4 v4_ = (v); ST(p, (i), v4_.x); ST(p, (i) + 1, v4_.y); ST(p, (i) + 2, v4_.z); ST(p, (i) + 3, v4_.w); } while (0)
#else
typedef float st_t;
typedef uint bits_t;
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#define LD4(p, i) vload4(0, (p) + (i))
#define ST4(p, i, v) vstore4((v), 0, (p) + (i))
#endif

// Sum of `v` over the work-group (size G, a power of two) through `red` (G floats of local memory).
// Every work-item gets the total; `red` is free again on return.
inline float wg_sum(float v, __local float* red) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}
