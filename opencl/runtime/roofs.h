#pragma once
// The device roofs on OpenCL (core/device_roofs.h, kernels/roofs.cl): the case, sized for the
// device, and its one dispatch.
#include <string>

#include "core/device_roofs.h"
#include "opencl/plan.h"

namespace ts::ocl {

// Whether the device computes in F16 (cl_khr_fp16).
bool has_fp16(cl_device_id d);

struct RoofShape {
  uint64_t bytes = 0;   // read / copy: the stream
  uint64_t lanes = 0;
  uint32_t rounds = 0;  // fma
  size_t local = 0;     // work-group size
  uint64_t chunk = 0;   // read / copy: vectors a work-group streams contiguously (0: the grid strides)
  std::string detail;   // for the benchmark's label
};
RoofShape roof_shape(Roof r, const DeviceLimits& lim);
RoofCase make_roof_case(Roof r, const RoofShape& s);
// Appends the roof's dispatch over the case's tensors (already on the device).
void plan_roof(Roof r, const RoofShape& s, const RoofCase& c, Planner& p);

}  // namespace ts::ocl
