#pragma once
// The OpenCL form of a recorded step (core/recorded_step.h): one cl_khr_command_buffer, recorded
// once and enqueued per step, over the launches' own buffers, the shared K/V pools and a small
// state buffer the host writes.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"
#include "opencl/plan.h"

namespace ts::ocl {

// What a recorded step needs of a prepared OpenCL launch.
class RecordableLaunch {
 public:
  virtual ~RecordableLaunch() = default;
  virtual const DeviceTensor& buffer(const std::string& name) const = 0;  // Error for a name it lacks
  virtual const std::vector<Dispatch>& dispatches() const = 0;
  // Tensors `names` brought back from their device buffers into the launch's tensors (storage).
  virtual void download(const std::vector<std::string>& names) = 0;
};

// Whether the device records command buffers this build can drive, and why not.
Support command_buffer_support(Runtime& rt);
std::unique_ptr<RecordedStep> record_opencl_step(Runtime& rt, const StepRecording& r);

}  // namespace ts::ocl
