// The device's own roofs (core/device_roofs.h): a read-only stream (each lane's wrapping sum of the
// vectors it read), a copy, and the FMA peak (32 independent chains acc = fma(acc, mul, add) a lane,
// mul / add as arguments so no compiler folds them; F16 as half2 pairs, a GPU's paired F16 rate,
// built with -DROOF_F16 only where the device has cl_khr_fp16). The streams stride by the grid over
// 16-byte vectors with four loads issued before the first is used.

// GPUs stride by the whole grid (chunk 0: a warp's lanes read consecutive vectors); CPU drivers give
// each work-group its own contiguous chunk of vectors, its work-items striding through it, so a core
// streams one region as the host's read stream does (a grid stride there makes every core sweep all).
#define ROOF_RANGE                                                                            \
  const int chunk_ = chunk, grp_ = (int)get_group_id(0), wg_ = (int)get_local_size(0);       \
  const int begin_ = chunk_ ? grp_ * chunk_ : 0, end_ = chunk_ ? min(n, begin_ + chunk_) : n; \
  const int lanes = chunk_ ? wg_ : (int)get_global_size(0);                                   \
  int i = begin_ + (chunk_ ? (int)get_local_id(0) : (int)get_global_id(0));

__kernel void roof_read(__global const uint4* x, __global uint* part, int n, int chunk) {
  ROOF_RANGE
  uint4 s0 = (uint4)(0), s1 = (uint4)(0), s2 = (uint4)(0), s3 = (uint4)(0);
  for (; i + 3 * lanes < end_; i += 4 * lanes) {
    s0 += x[i];
    s1 += x[i + lanes];
    s2 += x[i + 2 * lanes];
    s3 += x[i + 3 * lanes];
  }
  for (; i < end_; i += lanes) s0 += x[i];
  const uint4 s = s0 + s1 + s2 + s3;
  part[get_global_id(0)] = s.x + s.y + s.z + s.w;
}

__kernel void roof_copy(__global const uint4* x, __global uint4* y, int n, int chunk) {
  ROOF_RANGE
  for (; i + 3 * lanes < end_; i += 4 * lanes) {
    const uint4 a = x[i], b = x[i + lanes], c = x[i + 2 * lanes], d = x[i + 3 * lanes];
    y[i] = a;
    y[i + lanes] = b;
    y[i + 2 * lanes] = c;
    y[i + 3 * lanes] = d;
  }
  for (; i < end_; i += lanes) y[i] = x[i];
}

#ifdef ROOF_F16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define VEC half2
#define SCALAR half
#define NV 16
#define WIDTH 2
#define KERNEL roof_fma_f16
#else
#define VEC float4
#define SCALAR float
#define NV 8
#define WIDTH 4
#define KERNEL roof_fma_f32
#endif

// Chain c (of 32) starts at -c / 4 (core/device_roofs.cpp: fma_chain_start), lane-independent.
__kernel void KERNEL(__global float* out, int rounds, float mul, float add) {
  SCALAR start[NV * WIDTH];
  for (int c = 0; c < NV * WIDTH; ++c) start[c] = (SCALAR)(-0.25f * (float)c);
  VEC acc[NV];
#if WIDTH == 2
  for (int v = 0; v < NV; ++v) acc[v] = vload2(0, start + v * WIDTH);
#else
  for (int v = 0; v < NV; ++v) acc[v] = vload4(0, start + v * WIDTH);
#endif
  const VEC m = (VEC)((SCALAR)mul), a = (VEC)((SCALAR)add);
  for (int r = 0; r < rounds; ++r)
#pragma unroll
    for (int v = 0; v < NV; ++v) acc[v] = fma(acc[v], m, a);
  float s = 0.0f;
  for (int v = 0; v < NV; ++v) {
    SCALAR e[WIDTH];
#if WIDTH == 2
    vstore2(acc[v], 0, e);
#else
    vstore4(acc[v], 0, e);
#endif
    for (int j = 0; j < WIDTH; ++j) s += (float)e[j];
  }
  out[get_global_id(0)] = s;
}
