#pragma once
// layout.comp's strided 3-D copy, as a planner's dispatch between any two buffers (scratch included).
#include <cstdint>

#include "vulkan/plan.h"

namespace ts::vk {

// dst[dof + i0 ds0 + i1 ds1 + i2] = src[so + i0 ss0 + i1 ss1 + i2] over [n0, n1, n2].
struct Copy3d {
  int64_t n0 = 1, n1 = 1, n2 = 1, so = 0, ss0 = 0, ss1 = 0, dof = 0, ds0 = 0, ds1 = 0;
};

Dispatch layout_copy(const Target& tg, Binding src, Binding dst, const Copy3d& c);

}  // namespace ts::vk
