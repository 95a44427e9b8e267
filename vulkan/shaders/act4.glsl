// Four consecutive activations from index i (a multiple of 4): the F32 variant reads them as one
// 16-byte load through `a4`, the activations bound again as vec4s (the including shader declares it);
// the 16-bit variants widen four elements of `a`.
vec4 x4(uint i) {
#ifdef DT_F32
  return a4[i >> 2];
#else
  return vec4(ld(a[i]), ld(a[i + 1u]), ld(a[i + 2u]), ld(a[i + 3u]));
#endif
}
