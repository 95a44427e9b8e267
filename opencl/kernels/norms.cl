// Row norms: one work-group per row; each work-item strides over the row, then a work-group tree
// reduction (wg_sum, common.h) gives the row's statistics.

__kernel void rms_norm(__global const st_t* x, __global const st_t* w, __global st_t* out, int dim, float eps,
                       __local float* red) {
  const int row = get_group_id(0), lid = get_local_id(0), g = get_local_size(0);
  __global const st_t* xr = x + (size_t)row * dim;
  float ss = 0.0f;
  for (int c = lid; c < dim; c += g) {
    const float v = LD(xr, c);
    ss = fma(v, v, ss);
  }
  const float inv = 1.0f / sqrt(wg_sum(ss, red) / dim + eps);
  for (int c = lid; c < dim; c += g) ST(out, (size_t)row * dim + c, LD(xr, c) * inv * LD(w, c));
}

// residual += x (stored in the dtype), then out = rms_norm(residual as stored) * w.
__kernel void fused_add_rms_norm(__global st_t* residual, __global const st_t* x, __global const st_t* w,
                                 __global st_t* out, int dim, float eps, __local float* red) {
  const int row = get_group_id(0), lid = get_local_id(0), g = get_local_size(0);
  const size_t base = (size_t)row * dim;
  float ss = 0.0f;
  for (int c = lid; c < dim; c += g) {
    ST(residual, base + c, LD(residual, base + c) + LD(x, base + c));
    const float v = LD(residual, base + c);  // the stored (rounded) value is what the norm sees
    ss = fma(v, v, ss);
  }
  const float inv = 1.0f / sqrt(wg_sum(ss, red) / dim + eps);
  for (int c = lid; c < dim; c += g) ST(out, base + c, LD(residual, base + c) * inv * LD(w, c));
}

// Two passes over the row (mean, then the biased variance around it): stable for large means.
__kernel void layer_norm(__global const st_t* x, __global const st_t* gamma, __global const st_t* beta,
                         __global st_t* out, int dim, float eps, __local float* red) {
  const int row = get_group_id(0), lid = get_local_id(0), g = get_local_size(0);
  __global const st_t* xr = x + (size_t)row * dim;
  float s = 0.0f;
  for (int c = lid; c < dim; c += g) s += LD(xr, c);
  const float mean = wg_sum(s, red) / dim;
  float ss = 0.0f;
  for (int c = lid; c < dim; c += g) {
    const float d = LD(xr, c) - mean;
    ss = fma(d, d, ss);
  }
  const float inv = 1.0f / sqrt(wg_sum(ss, red) / dim + eps);
  for (int c = lid; c < dim; c += g)
    ST(out, (size_t)row * dim + c, fma((LD(xr, c) - mean) * inv, LD(gamma, c), LD(beta, c)));
}
