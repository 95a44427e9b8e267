// Work-group reductions over WG invocations (WG must be defined, a power of two). With
// -DUSE_SUBGROUP: subgroup arithmetic, then one value per subgroup through shared memory; without:
// a shared-memory tree. Both give every invocation the result and both are deterministic.
#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
shared float red_part[WG];  // one slot per subgroup; WG slots cover a subgroup size of 1

float wg_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) red_part[gl_SubgroupID] = v;
  barrier();
  float r = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) r += red_part[i];
  barrier();
  return r;
}

float wg_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) red_part[gl_SubgroupID] = v;
  barrier();
  float r = red_part[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) r = max(r, red_part[i]);
  barrier();
  return r;
}
#else
shared float red_part[WG];

float wg_reduce_(float v, bool is_max) {
  const uint t = gl_LocalInvocationIndex;
  red_part[t] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (t < s) red_part[t] = is_max ? max(red_part[t], red_part[t + s]) : red_part[t] + red_part[t + s];
    barrier();
  }
  const float r = red_part[0];
  barrier();
  return r;
}
float wg_sum(float v) { return wg_reduce_(v, false); }
float wg_max(float v) { return wg_reduce_(v, true); }
#endif

// The smallest uint over the work group (argmax's first index among equal maxima).
shared uint red_part_u[WG];
uint wg_min_u(uint v) {
#ifdef USE_SUBGROUP
  v = subgroupMin(v);
  if (subgroupElect()) red_part_u[gl_SubgroupID] = v;
  barrier();
  uint r = red_part_u[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) r = min(r, red_part_u[i]);
  barrier();
  return r;
#else
  const uint t = gl_LocalInvocationIndex;
  red_part_u[t] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (t < s) red_part_u[t] = min(red_part_u[t], red_part_u[t + s]);
    barrier();
  }
  const uint r = red_part_u[0];
  barrier();
  return r;
#endif
}
