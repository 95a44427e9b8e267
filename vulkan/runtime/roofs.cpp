// The device roofs (core/device_roofs.h, shaders/roofs.comp): their sizes, chosen from the device,
// and their dispatches.
#include "vulkan/runtime/roofs.h"

#include <algorithm>

#include <fmt/format.h>

namespace ts::vk {

namespace {

constexpr uint32_t kWg = 256;  // roofs.comp: any size works; 256 fills a GPU's schedulers in few groups
// A GPU stream of 1 GiB read (or 512 MiB copied): at least 4x the last-level cache of any GPU whose
// cache is at most 256 MB (an H100's L2 is 50 MB); a CPU driver's streams are the host's own, sized
// like the host's read stream and triad (256 MiB, 128 MiB arrays).
constexpr uint64_t kGpuReadBytes = uint64_t{1} << 30, kCpuReadBytes = uint64_t{256} << 20;
// 16-byte vectors per lane: a GPU gets many groups (each SM several deep, the tail a few percent of
// the run), a CPU driver the few fat ones its group cap allows.
constexpr uint64_t kVectorsPerLane = 32;
// FMA: 8192 groups of 256 lanes of 1024 rounds on a GPU (137 GFLOP, ~2 ms at 60 TFLOP/s; a dozen waves
// of groups, so the last one's tail costs little); a CPU driver's fill groups of 512 rounds.
constexpr uint32_t kGpuFmaGroups = 8192, kGpuFmaRounds = 1024, kCpuFmaRounds = 512;

// The stream split into equal windows within maxStorageBufferRange (a power of two of them, so the
// window is a whole number of vectors and its offset keeps the alignment the stream's start has).
uint32_t windows_for(uint64_t bytes, const Target& tg) {
  uint32_t w = 1;
  while (bytes / w > tg.max_range || (bytes / w) % tg.offset_align != 0) {
    check(w < (1u << 20), "vulkan: no window split of a {}-byte stream fits maxStorageBufferRange {}", bytes,
          tg.max_range);
    w *= 2;
  }
  return w;
}

}  // namespace

RoofPlan plan_roof(Roof r, const Target& tg, bool cpu_device) {
  RoofPlan out;
  if (r == Roof::read || r == Roof::copy) {
    const uint64_t bytes = (cpu_device ? kCpuReadBytes : kGpuReadBytes) / (r == Roof::copy ? 2 : 1);
    const uint32_t windows = windows_for(bytes, tg);
    const uint64_t win_bytes = bytes / windows, vecs = win_bytes / 16;
    const uint32_t groups = groups_for(static_cast<int64_t>(vecs), kWg * kVectorsPerLane,
                                       std::min(tg.group_cap, tg.max_groups[0]));
    const uint64_t lanes = uint64_t{groups} * kWg;
    out.c = make_stream_roof(r, bytes, windows, lanes);
    for (uint32_t w = 0; w < windows; ++w) {
      Dispatch d;
      d.shader = tg.variant(r == Roof::read ? Kernel::roof_read : Kernel::roof_copy);
      // Read: every window's lanes write their own slots of the whole part array (part_off).
      d.bindings = {Binding("x", w * win_bytes, win_bytes),
                    r == Roof::read ? Binding("part") : Binding("y", w * win_bytes, win_bytes)};
      d.push = Push().u(static_cast<int64_t>(vecs)).u(static_cast<int64_t>(w * lanes)).words();
      d.spec = {kWg};
      d.groups = {groups, 1, 1};
      out.dispatches.push_back(std::move(d));
    }
    out.detail = fmt::format("{} MiB {}{}, {} groups of {}", bytes >> 20, r == Roof::read ? "read" : "copied",
                             windows > 1 ? fmt::format(" in {} windows", windows) : "", groups, kWg);
  } else {
    const uint32_t groups = std::min(cpu_device ? tg.fill_groups : kGpuFmaGroups, tg.max_groups[0]);
    const uint32_t rounds = cpu_device ? kCpuFmaRounds : kGpuFmaRounds;
    out.c = make_fma_roof(r, uint64_t{groups} * kWg, rounds);
    Dispatch d;
    d.shader = tg.variant(r == Roof::fma_f32 ? Kernel::roof_fma_f32 : Kernel::roof_fma_f16);
    d.bindings = {"out"};
    d.push = Push().u(rounds).f(out.c.mul).f(out.c.add).words();
    d.spec = {kWg};
    d.groups = {groups, 1, 1};
    out.dispatches.push_back(std::move(d));
    out.detail = fmt::format("{} groups of {} x {} chains x {} rounds", groups, kWg, kFmaChains, rounds);
  }
  return out;
}

}  // namespace ts::vk
