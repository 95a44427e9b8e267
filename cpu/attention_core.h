#pragma once
// The data the attention core (cpu/attention.cpp) passes between its driver and its SIMD kernel.
#include <cstdint>

namespace ts::cpu {

// Key row j = [k1 row j (d1 elements) | k2 row j (d2, may be 0)]; value row j = v row j (dv), or the
// k1 segment when v is null (MLA). Strides count elements of the tensors' dtype.
struct KvView {
  const void* k1;
  int64_t ks1;
  const void* k2;
  int64_t ks2;
  const void* v;
  int64_t vs;
  int64_t d1, d2, dv;
};

// Query rows (F32, d1 + d2 each) and the key range [lo, hi) each row sees.
struct AttnBlock {
  const float* const* q;
  const int64_t* lo;
  const int64_t* hi;
  int64_t rows;
};

// One task: keys [j0, j1) for every row of a block, with its online-softmax state per row
// (running max m, sum l, unnormalised output acc [rows, dv]).
struct AttnTask {
  int64_t j0, j1;
  float* m;
  float* l;
  float* acc;
};

}  // namespace ts::cpu
