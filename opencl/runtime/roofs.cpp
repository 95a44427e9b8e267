#include "opencl/runtime/roofs.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace ts::ocl {

namespace {

// As the Vulkan roofs (vulkan/runtime/roofs.cpp): a GPU stream of 1 GiB read (512 MiB copied), at least
// 4x the last-level cache of any GPU with at most 256 MB of it; a CPU driver's sized like the host's
// read stream and triad. 32 vectors a lane; FMA: 8192 groups of 1024 rounds on a GPU, a few groups
// per compute unit of 512 rounds on a CPU driver.
constexpr uint64_t kGpuReadBytes = uint64_t{1} << 30, kCpuReadBytes = uint64_t{256} << 20;
constexpr uint64_t kVectorsPerLane = 32;
constexpr uint64_t kGpuFmaGroups = 8192;
constexpr uint32_t kGpuFmaRounds = 1024, kCpuFmaRounds = 512;
constexpr uint64_t kCpuGroupsPerUnit = 4;
// A CPU driver's stream: work-groups of one work-item, each streaming its own contiguous chunk, as the
// host's read stream does (PoCL, 2 cores: 4.7 GB/s against the host's 6.0; 8 work-items a group, or a
// grid stride, under 1 GB/s: every core then sweeps the whole array).
constexpr size_t kCpuStreamLocal = 1;

}  // namespace

bool has_fp16(cl_device_id d) {
  size_t n = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, nullptr, &n) != CL_SUCCESS) return false;
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s.data(), nullptr) != CL_SUCCESS) return false;
  return (" " + s + " ").find(" cl_khr_fp16 ") != std::string::npos;
}

RoofShape roof_shape(Roof r, const DeviceLimits& lim) {
  RoofShape s;
  s.local = std::min<size_t>(256, lim.max_work_group);
  const uint64_t cpu_groups = kCpuGroupsPerUnit * std::max<cl_uint>(1, lim.compute_units);
  if (r == Roof::read || r == Roof::copy) {
    s.bytes = (lim.cpu ? kCpuReadBytes : kGpuReadBytes) / (r == Roof::copy ? 2 : 1);
    // One buffer holds the stream (and its guards): halve it where the device allows less.
    while (s.bytes + 2 * kGuardBytes > lim.max_alloc && s.bytes > (uint64_t{16} << 20)) s.bytes /= 2;
    const uint64_t vecs = s.bytes / 16;
    uint64_t groups = std::max<uint64_t>(1, vecs / (s.local * kVectorsPerLane));
    if (lim.cpu) {
      s.local = std::min(kCpuStreamLocal, lim.max_work_group);
      groups = cpu_groups;
      s.chunk = (vecs + groups - 1) / groups;
    }
    s.lanes = groups * s.local;
    s.detail = fmt::format("{} MiB {}, {} groups of {}{}", s.bytes >> 20, r == Roof::read ? "read" : "copied", groups,
                           s.local, s.chunk ? ", a contiguous chunk each" : "");
  } else {
    const uint64_t groups = lim.cpu ? cpu_groups : kGpuFmaGroups;
    s.rounds = lim.cpu ? kCpuFmaRounds : kGpuFmaRounds;
    s.lanes = groups * s.local;
    s.detail = fmt::format("{} groups of {} x {} chains x {} rounds", groups, s.local, kFmaChains, s.rounds);
  }
  return s;
}

RoofCase make_roof_case(Roof r, const RoofShape& s) {
  return r == Roof::read || r == Roof::copy ? make_stream_roof(r, s.bytes, 1, s.lanes)
                                            : make_fma_roof(r, s.lanes, s.rounds);
}

void plan_roof(Roof r, const RoofShape& s, const RoofCase& c, Planner& p) {
  const std::vector<size_t> global{s.lanes}, local{s.local};
  switch (r) {
    case Roof::read:
      p.dispatch(p.kernel("roofs.cl", "roof_read"), global, local, p.buf("x"), p.buf("part"),
                 static_cast<int64_t>(c.words / 4), static_cast<int64_t>(s.chunk));
      break;
    case Roof::copy:
      p.dispatch(p.kernel("roofs.cl", "roof_copy"), global, local, p.buf("x"), p.buf("y"),
                 static_cast<int64_t>(c.words / 4), static_cast<int64_t>(s.chunk));
      break;
    case Roof::fma_f32:
      p.dispatch(p.kernel("roofs.cl", "roof_fma_f32"), global, local, p.buf("out"), static_cast<int64_t>(c.rounds),
                 c.mul, c.add);
      break;
    case Roof::fma_f16:
      p.dispatch(p.kernel("roofs.cl", "roof_fma_f16", "-DROOF_F16"), global, local, p.buf("out"),
                 static_cast<int64_t>(c.rounds), c.mul, c.add);
      break;
  }
}

}  // namespace ts::ocl
