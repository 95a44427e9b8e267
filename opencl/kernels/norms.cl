// Row norms: one work-group per row. Each work-item strides over the row in vectors of VW elements
// (a scalar tail covers dim % VW), then a work-group tree reduction (wg_sum, common.h) gives the
// row's statistics. GPUs: 256 work-items, VW 1 (coalesced). CPU drivers: 1 work-item, VW 16 (SIMD).
//   -DVW
#define vec_t FLOATN(VW)
#if VW == 1
#define VLD(p, i) LD(p, i)
#define VST(p, i, v) ST(p, i, v)
#else
#define VLD(p, i) LDN(VW, p, i)
#define VST(p, i, v) STN(VW, p, i, v)
#endif

inline float vsum(vec_t v) {
#if VW == 1
  return v;
#else
  float part[VW];
  VSTOREN(VW)(v, 0, part);
  float s = 0.0f;
  for (int q = 0; q < VW; ++q) s += part[q];
  return s;
#endif
}

// Loops over one row: vector part, then the tail, both strided over the work-group.
#define FOR_VEC(c) for (int c = get_local_id(0) * VW; c + VW <= dim; c += get_local_size(0) * VW)
#define FOR_TAIL(c) for (int c = dim / VW * VW + get_local_id(0); c < dim; c += get_local_size(0))

__kernel void rms_norm(__global const st_t* x, __global const st_t* w, __global st_t* out, int dim, float eps,
                       __local float* red) {
  const size_t base = (size_t)get_group_id(0) * dim;
  vec_t ss = (vec_t)(0.0f);
  FOR_VEC(c) {
    const vec_t v = VLD(x, base + c);
    ss = fma(v, v, ss);
  }
  float s = vsum(ss);
  FOR_TAIL(c) s = fma(LD(x, base + c), LD(x, base + c), s);
  const float inv = 1.0f / sqrt(wg_sum(s, red) / dim + eps);
  FOR_VEC(c) VST(out, base + c, VLD(x, base + c) * inv * VLD(w, c));
  FOR_TAIL(c) ST(out, base + c, LD(x, base + c) * inv * LD(w, c));
}

// residual += x (stored in the dtype), then out = rms_norm(residual as stored) * w.
__kernel void fused_add_rms_norm(__global st_t* residual, __global const st_t* x, __global const st_t* w,
                                 __global st_t* out, int dim, float eps, __local float* red) {
  const size_t base = (size_t)get_group_id(0) * dim;
  vec_t ss = (vec_t)(0.0f);
  FOR_VEC(c) {
    VST(residual, base + c, VLD(residual, base + c) + VLD(x, base + c));
    const vec_t v = VLD(residual, base + c);  // the stored (rounded) value is what the norm sees
    ss = fma(v, v, ss);
  }
  float s = vsum(ss);
  FOR_TAIL(c) {
    ST(residual, base + c, LD(residual, base + c) + LD(x, base + c));
    const float v = LD(residual, base + c);
    s = fma(v, v, s);
  }
  const float inv = 1.0f / sqrt(wg_sum(s, red) / dim + eps);
  FOR_VEC(c) VST(out, base + c, VLD(residual, base + c) * inv * VLD(w, c));
  FOR_TAIL(c) ST(out, base + c, LD(residual, base + c) * inv * LD(w, c));
}

// Two passes over the row (mean, then the biased variance around it): stable for large means.
__kernel void layer_norm(__global const st_t* x, __global const st_t* gamma, __global const st_t* beta,
                         __global st_t* out, int dim, float eps, __local float* red) {
  const size_t base = (size_t)get_group_id(0) * dim;
  vec_t sv = (vec_t)(0.0f);
  FOR_VEC(c) sv += VLD(x, base + c);
  float s = vsum(sv);
  FOR_TAIL(c) s += LD(x, base + c);
  const float mean = wg_sum(s, red) / dim;
  vec_t ssv = (vec_t)(0.0f);
  FOR_VEC(c) {
    const vec_t d = VLD(x, base + c) - mean;
    ssv = fma(d, d, ssv);
  }
  float ss = vsum(ssv);
  FOR_TAIL(c) {
    const float d = LD(x, base + c) - mean;
    ss = fma(d, d, ss);
  }
  const float inv = 1.0f / sqrt(wg_sum(ss, red) / dim + eps);
  FOR_VEC(c) VST(out, base + c, fma((VLD(x, base + c) - mean) * inv, VLD(gamma, c), VLD(beta, c)));
  FOR_TAIL(c) ST(out, base + c, fma((LD(x, base + c) - mean) * inv, LD(gamma, c), LD(beta, c)));
}
