// The MoE weighted sums: out[out_off + b*hidden + h] = (base +) sum_k w[w_off + b*top_k + k] *
// slots[b, k, h], summed in F32 in slot order and rounded once to the dtype; with -DADD the base is out's
// own value (the in-out residual), added after the sum as the reference does. 2-D range: dim 0 the
// column h (neighbouring work-items read neighbouring elements: coalesced), dim 1 the token b.
//   -DADD
__kernel void weighted_sum(__global const st_t* slots, __global const float* w, __global st_t* out, int batch,
                           int top_k, int hidden, int w_off, int out_off) {
  const int h = get_global_id(0), b = get_global_id(1);
  if (h >= hidden || b >= batch) return;
  __global const st_t* s = slots + (size_t)b * top_k * hidden + h;
  __global const float* wb = w + w_off + (size_t)b * top_k;
  float acc = 0.0f;
  for (int k = 0; k < top_k; ++k) acc = fma(wb[k], LD(s, (size_t)k * hidden), acc);
  const size_t at = (size_t)out_off + (size_t)b * hidden + h;
#ifdef ADD
  acc = LD(out, at) + acc;
#endif
  ST(out, at, acc);
}
